import AMQP
import PushCore
import Testing
@testable import Worker

@Suite("Dead-letter copy")
struct DeadLetterCopyTests {
    private static let now = UnixTime(milliseconds: 1_700_000_000_000)

    private func delivery(_ properties: AMQPProperties, body: [UInt8] = Array("{}".utf8), discarded: Int? = nil) -> AMQPDelivery {
        AMQPDelivery(tag: AMQPDeliveryTag(connectionGeneration: 1, value: 1), body: body, properties: properties,
                     exchange: "", routingKey: "push.jobs", redelivered: false, discardedBodySize: discarded)
    }

    @Test func invalidOrOverlongShortStringsAreDroppedAndNamed() {
        var properties = AMQPProperties()
        properties.messageID = String(decoding: [UInt8](repeating: 0xFF, count: 255), as: UTF8.self)   // 765 bytes once decoded
        properties.type = String(repeating: "t", count: 300)
        properties.correlationID = "fine"
        properties.expiration = "1000"
        let copy = DeadLetterCopy.properties(of: delivery(properties), rejection: JobRejection(field: "x", "bad"), now: Self.now)
        #expect(copy.messageID == nil)
        #expect(copy.type == nil)
        #expect(copy.correlationID == "fine")
        #expect(copy.expiration == nil)
        #expect(copy.persistent)
        #expect(copy.headers["x-pushworker-dropped-properties"] == .string("message_id,type"))
    }

    @Test func errorTextAndFieldAreBoundedWhateverTheRejection() {
        let key = String(repeating: "k", count: 70_000)
        let rejection = JobRejection(field: key, "unknown field \(key)")
        let copy = DeadLetterCopy.properties(of: delivery(AMQPProperties()), rejection: rejection, now: Self.now)
        guard case .string(let error)? = copy.headers["x-pushworker-error"], case .string(let field)? = copy.headers["x-pushworker-field"] else {
            Issue.record("headers missing")
            return
        }
        #expect(error.utf8.count <= DeadLetterCopy.maxErrorBytes)
        #expect(field.utf8.count <= DeadLetterCopy.maxFieldBytes)
        #expect(error.hasSuffix("…"))
    }

    @Test func publisherHeadersAreKeptWithinBudgetAndBadOnesDropped() {
        var properties = AMQPProperties()
        properties.headers["trace"] = "abc"
        properties.headers[String(repeating: "h", count: 300)] = "long key"
        properties.headers["bad"] = .string(String(decoding: [0xC3, 0x28], as: UTF8.self))
        properties.headers["huge"] = .string(String(repeating: "v", count: 100_000))
        properties.headers["x-pushworker-error"] = "forged"
        let copy = DeadLetterCopy.properties(of: delivery(properties), rejection: JobRejection(field: nil, "bad"), now: Self.now)
        #expect(copy.headers["trace"] == "abc")
        #expect(copy.headers["huge"] == nil)
        #expect(copy.headers["bad"] == nil)
        #expect(copy.headers["x-pushworker-error"] == "bad")
        #expect(copy.headers["x-pushworker-dropped-headers"] == .int(3))
    }

    @Test func aCutBodyIsMarkedWithItsSize() {
        let copy = DeadLetterCopy.properties(of: delivery(AMQPProperties(), discarded: 100_000_000),
                                             rejection: JobRejection(field: nil, "too large"), now: Self.now)
        #expect(copy.headers["x-pushworker-truncated-from"] == .int(100_000_000))
    }

    @Test func excerptsAreShortAndSurviveBadUTF8() {
        let body = Array("{\"tokens\":[".utf8) + [0xFF, 0xFE] + [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        let excerpt = DeadLetterCopy.excerpt(of: body)
        #expect(excerpt.hasPrefix("{\"tokens\":["))
        #expect(excerpt.hasSuffix("…"))
        #expect(excerpt.utf8.count <= DeadLetterCopy.excerptBytes * 3 + 3)
        #expect(DeadLetterCopy.excerpt(of: Array("{}".utf8)) == "{}")
    }

    @Test func truncationKeepsWholeCharacters() {
        let text = String(repeating: "é", count: 600)   // 2 bytes each
        let cut = DeadLetterCopy.truncated(text, toBytes: 100)
        #expect(cut.utf8.count <= 100)
        #expect(cut.hasSuffix("…"))
        #expect(!cut.unicodeScalars.contains("\u{FFFD}"))
    }
}
