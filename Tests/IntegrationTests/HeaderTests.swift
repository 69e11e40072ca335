import Foundation
import APNsCore
import PushCore
import Sandbox
import Testing
import Worker

/// Every header a job can set, sent through the worker to the sandbox and read back from what the
/// sandbox received (issue "guards": the APNs surface end to end, not only alerts).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct HeaderTests {
    @Test func everyPushTypeArrivesWithItsTopicAndPriority() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            var expected: [String: (type: String, topic: String, priority: Int)] = [:]
            for (index, pushType) in APNsPushType.allCases.enumerated() {
                let token = PipelineFixture.token(5000 + index)
                let payload = switch pushType {
                case .background: #"{"aps":{"content-available":1}}"#
                case .mdm: #"{"mdm":"00000000-1111-2222-3333-444444444444"}"#
                case .liveactivity: #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{}}}"#
                case .controls, .widgets: #"{"aps":{"content-changed":true}}"#
                default: #"{"aps":{"alert":"x"}}"#
                }
                try await fixture.publish(#"{"id":"type-\#(pushType.rawValue)","tokens":["\#(token)"],"push_type":"\#(pushType.rawValue)","payload":\#(payload)}"#)
                expected[token] = (pushType.rawValue, pushType.topic(forBundleID: "com.example.app"), pushType == .background ? 5 : 10)
            }
            _ = try await fixture.events { $0.filter { $0.routingKey == "job.completed" }.count >= expected.count }
            let received = fixture.sandbox.received()
            #expect(received.count == expected.count)
            for notification in received {
                let want = try #require(expected[notification.token])
                #expect(notification.status == 200, "\(want.type): \(notification.reason ?? "")")
                #expect(notification.pushType == want.type)
                #expect(notification.topic == want.topic)
                #expect(notification.priority == want.priority)
            }
        }
    }

    /// A Live Activity's start, update and end, each from a job's `live_activity` section, reach
    /// APNs as ActivityKit documents them: the recorded payloads byte for byte, the push type and
    /// the `.push-type.liveactivity` topic, which the job never named.
    @Test func liveActivitySectionsArriveAsActivityKitDocumentsThem() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let sections = [
                (5200, #"{"event":"start","timestamp":1700000100,"attributes_type":"MatchAttributes","attributes":{"home":"A","away":"B"},"content_state":{"score":"0-0"},"alert":{"title":"Kick-off","body":"A vs B"}}"#,
                 #"{"aps":{"timestamp":1700000100,"event":"start","content-state":{"score":"0-0"},"attributes-type":"MatchAttributes","attributes":{"away":"B","home":"A"},"alert":{"body":"A vs B","title":"Kick-off"}}}"#),
                (5201, #"{"event":"update","timestamp":1700000200,"content_state":{"score":"1-0"},"stale_date":1700003600}"#,
                 #"{"aps":{"timestamp":1700000200,"event":"update","content-state":{"score":"1-0"},"stale-date":1700003600}}"#),
                (5202, #"{"event":"end","timestamp":1700009000,"content_state":{"score":"2-1"},"dismissal_date":1700012600}"#,
                 #"{"aps":{"timestamp":1700009000,"event":"end","content-state":{"score":"2-1"},"dismissal-date":1700012600}}"#),
            ]
            for (number, section, _) in sections {
                try await fixture.publish(#"{"id":"la-\#(number)","tokens":["\#(PipelineFixture.token(number))"],"live_activity":\#(section)}"#)
            }
            _ = try await fixture.events { $0.filter { $0.routingKey == "job.completed" }.count >= sections.count }
            let byToken = Dictionary(uniqueKeysWithValues: fixture.sandbox.received().map { ($0.token, $0) })
            for (number, _, payload) in sections {
                let notification = try #require(byToken[PipelineFixture.token(number)])
                #expect(notification.status == 200, "\(notification.reason ?? "")")
                #expect(notification.pushType == "liveactivity")
                #expect(notification.topic == "com.example.app.push-type.liveactivity")
                #expect(String(decoding: notification.payload, as: UTF8.self) == payload)
            }
        }
    }

    @Test func collapseIDExpirationPriorityAndTopicOverrideReachAPNs() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let now = Int(Date().timeIntervalSince1970)
            let absolute = now + 7200
            try await fixture.publish(#"{"id":"h1","tokens":["\#(PipelineFixture.token(5100))"],"collapse_id":"score-1","expiration":\#(absolute),"priority":5,"payload":{"aps":{"alert":"x"}}}"#)
            try await fixture.publish(#"{"id":"h2","tokens":["\#(PipelineFixture.token(5101))"],"expiration":"+3600","topic":"com.example.other","payload":{"aps":{"alert":"x"}}}"#)
            try await fixture.publish(#"{"id":"h3","tokens":["\#(PipelineFixture.token(5102))"],"priority":1,"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { $0.filter { $0.routingKey == "job.completed" }.count >= 3 }
            let byToken = Dictionary(uniqueKeysWithValues: fixture.sandbox.received().map { ($0.token, $0) })
            let first = try #require(byToken[PipelineFixture.token(5100)])
            #expect(first.collapseID == "score-1")
            #expect(first.expiration == absolute)
            #expect(first.priority == 5)
            let second = try #require(byToken[PipelineFixture.token(5101)])
            let relative = try #require(second.expiration)
            #expect(abs(relative - (now + 3600)) <= 60)
            #expect(second.collapseID == nil)
            // The job's own topic, not the app's (com.example.app, which the others carry).
            #expect(second.topic == "com.example.other")
            #expect(first.topic == "com.example.app")
            let third = try #require(byToken[PipelineFixture.token(5102)])
            #expect(third.priority == 1)
            #expect(third.expiration == 0)
        }
    }

    @Test func aSecondConnectionOpensWhenTheFirstIsAtItsStreamLimit() async throws {
        try await PipelineFixture.with(sandbox: {
            $0.maxConcurrentStreams = 1
            $0.faults.latency = .milliseconds(50)
        }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration())   // --max-connections 2
            let tokens = (0..<20).map { PipelineFixture.token(5200 + $0) }
            try await fixture.publish(#"{"id":"streams","tokens":["\#(tokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let received = fixture.sandbox.received()
            #expect(received.count == tokens.count)
            #expect(Set(received.map(\.connectionID)).count == 2)
            #expect(fixture.sandbox.statistics().maxConcurrentStreamsSeen == 1)
        }
    }

    @Test func everyRequestCarriesAnAPNsIDThatTheEventsName() async throws {
        let tokens = (0..<5).map { PipelineFixture.token(5200 + $0) }
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: tokens[3], status: 410, reason: "Unregistered")] }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"ids","tokens":["\#(tokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"x"}}}"#)
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            // The sandbox generates an id only when the request had none: so these are ours.
            let sent = Dictionary(uniqueKeysWithValues: fixture.sandbox.received().map { ($0.token, $0.apnsID) })
            let ids = tokens.map { sent[$0] ?? "" }
            let canonical = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/
            for id in ids {
                #expect(id.wholeMatch(of: canonical) != nil, "\(id)")
            }
            let prefixes: Set<String> = Set(ids.map { String($0.prefix(28)) })
            #expect(prefixes.count == 1, "one range per job attempt")
            let counters: [String] = ids.map { String($0.suffix(8)) }
            #expect(counters == ["00000000", "00000001", "00000002", "00000003", "00000004"], "counted in the job's device order")
            let completedEvent = events.first { $0.routingKey == "job.completed" }
            let completed = try #require(completedEvent)
            #expect(completed.string("apns_id_first") == ids[0])
            #expect(completed.string("apns_id_last") == ids[4])
            let invalidEvent = events.first { $0.routingKey == "token.invalid" }
            let invalid = try #require(invalidEvent)
            #expect(invalid.string("apns_id") == ids[3])
        }
    }
}
