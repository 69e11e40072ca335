import AMQP
import Operations
import PushCore
import Testing
@testable import Worker

/// Reading back what `DeadLetterCopy` writes, and the replay plan, without a broker.
@Suite struct DeadLetterTests {
    private func copy(body: [UInt8], field: String? = "tokens[0]", truncatedFrom: Int? = nil,
                      headers: [String: AMQPFieldValue] = [:], messageID: String? = "m-1") -> (DeadLetter, AMQPProperties) {
        let original = AMQPProperties(contentType: "application/json", messageID: messageID, headers: headers)
        let delivery = AMQPDelivery(tag: AMQPDeliveryTag(connectionGeneration: 1, value: 1), body: body, properties: original,
                                    exchange: "", routingKey: "push.jobs", redelivered: false, discardedBodySize: truncatedFrom)
        let properties = DeadLetterCopy.properties(of: delivery, rejection: JobRejection(field: field, "not a device token"),
                                                   now: UnixTime(milliseconds: 1_700_000_000_000))
        return (DeadLetter(body: body, properties: properties), properties)
    }

    @Test func readsTheJobAndWhyItWasRejected() {
        let (letter, _) = copy(body: DeadCopies.job(id: "j-1", app: "shop"))
        #expect(letter.id == "j-1")
        #expect(letter.app == "shop")
        #expect(letter.field == "tokens[0]")
        #expect(letter.error == "tokens[0]: not a device token")
        #expect(letter.rejectedAt == "2023-11-14T22:13:20.000Z")
        #expect(letter.truncatedFrom == nil)
    }

    @Test func aBodyThatIsNoJobIsNamedByItsMessageID() {
        let (letter, _) = copy(body: Array("not json".utf8), field: nil)
        #expect(letter.id == "m-1")
        #expect(letter.app == nil)
        #expect(letter.field == nil)
        let (anonymous, _) = copy(body: Array("[]".utf8), messageID: nil)
        #expect(anonymous.id == nil)
        #expect(anonymous.name == "a job without an id")
    }

    @Test func aCutCopyIsSeenAsCut() {
        let (letter, properties) = copy(body: Array(DeadCopies.job(id: "big").prefix(30)), truncatedFrom: 9_000_000)
        #expect(letter.truncatedFrom == 9_000_000)
        #expect(letter.id == "m-1")
        #expect(DeadDecision(letter, properties: properties, selection: .all, operation: .replay) == .keepTruncated)
        // A cut job can still be dropped.
        #expect(DeadDecision(letter, properties: properties, selection: .all, operation: .drop) == .drop)
    }

    @Test func theReplayedCopyIsAFreshJob() {
        let publisher: [String: AMQPFieldValue] = [
            "trace": "abc", "x-death": .array([.table(["count": 1, "queue": "push.jobs.retry.1s"])]),
            "x-first-death-queue": "push.jobs.retry.1s", "x-pushworker-deferrals": 2,
        ]
        let (letter, properties) = copy(body: DeadCopies.job(id: "j", attempts: 2), headers: publisher)
        guard case .replay(let replayed) = DeadDecision(letter, properties: properties, selection: .all, operation: .replay) else {
            Issue.record("not replayed")
            return
        }
        #expect(replayed.headers == ["trace": "abc"])
        #expect(replayed.contentType == "application/json")
        #expect(replayed.messageID == "m-1")
        #expect(replayed.persistent)
    }

    @Test func onlyTheSelectedJobsAreTouched() throws {
        let (letter, properties) = copy(body: DeadCopies.job(id: "j-2"))
        #expect(DeadDecision(letter, properties: properties, selection: .ids(["j-1"]), operation: .replay) == .leave)
        #expect(DeadDecision(letter, properties: properties, selection: .ids(["j-1", "j-2"]), operation: .drop) == .drop)
        #expect(throws: OperationError.self) { try DeadSelection(ids: [], all: false) }
        #expect(throws: OperationError.self) { try DeadSelection(ids: ["a"], all: true) }
        #expect(try DeadSelection(ids: ["a", "a"], all: false) == .ids(["a"]))
    }

    @Test func theListIsReadableAsJSON() throws {
        let (letter, _) = copy(body: DeadCopies.job(id: #"j\"1"#))
        let parsed = try JSONValue.parse(Array(DeadListReport.json([letter]).utf8))
        guard case .array(let items) = parsed, case .object(let first)? = items.first else { throw TestFailure("not an array of objects") }
        #expect(first["id"] == .string("j\"1"))
        #expect(first["field"] == .string("tokens[0]"))
        #expect(first["truncated_from"] == .null)
    }
}
