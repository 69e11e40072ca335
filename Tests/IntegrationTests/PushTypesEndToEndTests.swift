import APNsCore
import Foundation
import PushCore
import Sandbox
import Testing

/// Every one of Apple's 11 push types through a worker, RabbitMQ, Redis and the sandbox (which
/// refuses what Apple may silently drop): sent with a valid payload, and rejected with a broken
/// one, with `job.rejected` naming the field, never sent.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PushTypesEndToEndTests {
    static func valid(_ type: APNsPushType) -> String {
        switch type {
        case .background: #"{"aps":{"content-available":1}}"#
        case .mdm: #"{"mdm":"00000000-1111-2222-3333-444444444444"}"#
        case .liveactivity: #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}"#
        case .controls, .widgets: #"{"aps":{"content-changed":true}}"#
        default: #"{"aps":{"alert":"x"}}"#
        }
    }

    /// A payload the type may not carry, and the field the rejection names.
    static func broken(_ type: APNsPushType) -> (payload: String, field: String) {
        switch type {
        case .background: (#"{"aps":{"content-available":1,"alert":"x"}}"#, "payload.aps.alert")
        case .controls, .widgets: (#"{"aps":{"content-changed":false}}"#, "payload.aps.content-changed")
        case .liveactivity: (#"{"aps":{"event":"update","timestamp":1700000000}}"#, "payload.aps.content-state")
        case .mdm: (#"{"mdm":"\#(String(repeating: "m", count: 4200))"}"#, "payload")
        default: (#"{"other":1}"#, "payload.aps")
        }
    }

    @Test func eachPushTypeIsSentWhenValidAndRejectedNamingTheFieldWhenBroken() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let types = APNsPushType.allCases
            #expect(types.count == 11)
            for (index, type) in types.enumerated() {
                try await fixture.publish(#"{"id":"ok-\#(type.rawValue)","tokens":["\#(PipelineFixture.token(7_700 + index))"],"push_type":"\#(type.rawValue)","payload":\#(Self.valid(type))}"#)
                let broken = Self.broken(type)
                try await fixture.publish(#"{"id":"bad-\#(type.rawValue)","tokens":["\#(PipelineFixture.token(7_800 + index))"],"push_type":"\#(type.rawValue)","payload":\#(broken.payload)}"#)
            }
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" || $0.routingKey == "job.rejected" }.count >= 2 * types.count
            }
            let received = fixture.sandbox.received()
            for (index, type) in types.enumerated() {
                let sentTo = PipelineFixture.token(7_700 + index)
                let request = received.first { $0.token == sentTo }
                #expect(request?.status == 200 && request?.pushType == type.rawValue, "\(type.rawValue): \(request?.reason ?? "not received")")
                let expectedTopic = type.topic(forBundleID: "com.example.app")
                #expect(request?.topic == expectedTopic, "\(type.rawValue)")
                let rejected = events.first { $0.routingKey == "job.rejected" && $0.string("job_id") == "bad-\(type.rawValue)" }
                #expect(rejected?.string("field") == Self.broken(type).field, "\(type.rawValue): \(rejected?.string("error") ?? "not rejected")")
                let brokenTo = PipelineFixture.token(7_800 + index)
                let brokenSent = received.contains { $0.token == brokenTo }
                #expect(!brokenSent, "\(type.rawValue): a broken job is never sent")
            }
        }
    }
}
