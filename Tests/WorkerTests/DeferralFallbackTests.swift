@testable import AMQP
import PushCore
import Testing
@testable import Worker

/// A job deferred while Redis is down goes back with its publisher's properties. Those can be
/// impossible to encode (Fuzz/FuzzAMQPFieldTable: a header name of 86 bytes of 0xff decodes to 258
/// bytes, and the encoder now refuses it as `unencodable`); the fallback keeps the job from being
/// dropped.
@Suite("Deferral fallback")
struct DeferralFallbackTests {
    private func delivery(_ properties: AMQPProperties) -> AMQPDelivery {
        AMQPDelivery(tag: AMQPDeliveryTag(connectionGeneration: 1, value: 1), body: Array(#"{"tokens":[]}"#.utf8),
                     properties: properties, exchange: "", routingKey: "push.jobs", redelivered: false)
    }

    @Test("headers that cannot be encoded: the fallback can, and keeps the count and the message id")
    func unencodableHeaders() throws {
        var properties = AMQPProperties(messageID: "job-7")
        properties.headers[String(decoding: [UInt8](repeating: 0xff, count: 86), as: UTF8.self)] = true
        properties.headers[JobProcessor.deferralsHeader] = 2
        #expect(throws: AMQPError.self) { try FieldTableWire.encode(properties.headers) }

        let fallback = JobProcessor.deferralFallback(of: delivery(properties), deferrals: 3)
        #expect(fallback.headers == [JobProcessor.deferralsHeader: 3])
        #expect(fallback.messageID == "job-7")
        #expect(fallback.persistent)
        let encoded = try FieldTableWire.encode(fallback.headers)
        #expect(FieldTableWire.decode(encoded)?.table == fallback.headers)
    }

    @Test("a message id too long to encode is left out of the fallback")
    func unencodableMessageID() {
        let properties = AMQPProperties(messageID: String(decoding: [UInt8](repeating: 0xff, count: 255), as: UTF8.self))
        #expect(JobProcessor.deferralFallback(of: delivery(properties), deferrals: 1).messageID == nil)
    }
}
