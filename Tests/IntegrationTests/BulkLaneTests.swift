import Foundation
import PushCore
import Sandbox
import Testing
import Worker

/// Broadcasts never delay transactional pushes: fan-out chunks wait in the bulk lane and use at
/// most their share of the devices in flight, so a one-device job published during a broadcast
/// goes out at once.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BulkLaneTests {
    @Test func aTransactionalJobOvertakesARunningBroadcast() async throws {
        // Every answer takes a second. The bulk share (40 of 50 in flight) lets one 1,000-device
        // chunk run at a time, so the 5,000-device broadcast takes at least 5 s, while a
        // one-device job needs one answer's time: the room kept for it is never taken.
        try await PipelineFixture.with(sandbox: { $0.faults.latency = .seconds(1) }) { fixture in
            var configuration = try fixture.workerConfiguration(chunkSize: 1000, requestTimeout: .seconds(30))
            configuration.maxInFlight = 50
            try fixture.startWorker(configuration)
            let members = (0..<5000).map { PipelineFixture.token(96_000 + $0) }
            try await fixture.addToGroup("everyone", members)
            try await fixture.publish(#"{"id":"broadcast","groups":["everyone"],"payload":{"aps":{"alert":"news"}}}"#)

            let broadcast = Set(members)
            func delivered(_ tokens: Set<String>) -> Int {
                Set(fixture.sandbox.received().filter { $0.status == 200 && tokens.contains($0.token) }.map(\.token)).count
            }
            try await waitUntil("the broadcast is under way") { delivered(broadcast) >= 100 }
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 0, "chunks wait in the bulk lane, not the job queue")

            let transactional = (0..<10).map { PipelineFixture.token(97_000 + $0) }
            for (index, token) in transactional.enumerated() {
                try await fixture.publish(#"{"id":"reset-\#(index)","tokens":["\#(token)"],"payload":{"aps":{"alert":"reset"}}}"#)
            }
            try await waitUntil("the transactional jobs are delivered") { delivered(Set(transactional)) == transactional.count }
            let broadcastSoFar = delivered(broadcast)
            #expect(broadcastSoFar < members.count, "delivered while the broadcast still ran (\(broadcastSoFar) of \(members.count))")

            try await waitUntil("the broadcast is delivered", timeout: .seconds(120)) { delivered(broadcast) == members.count }
            let accepted = fixture.sandbox.received().filter { $0.status == 200 }
            #expect(accepted.count == members.count + transactional.count, "each device once")
        }
    }

    /// A job marked bulk is moved to the bulk lane and delivered from there; its retries stay bulk.
    @Test func aJobMarkedBulkIsDeliveredFromTheBulkLane() async throws {
        let flaky = PipelineFixture.token(98_001)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: flaky, status: 503, reason: "ServiceUnavailable", times: 1)] }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let tokens = [flaky, PipelineFixture.token(98_002)]
            try await fixture.publish(#"{"id":"campaign","bulk":true,"tokens":["\#(tokens[0])","\#(tokens[1])"],"payload":{"aps":{"alert":"sale"}}}"#)
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" }.reduce(0) { $0 + ($1.int("sent") ?? 0) } == 2
            }
            let completedJobs = events.filter { $0.routingKey == "job.completed" }.count
            #expect(completedJobs == 2, "the first round and the retry")
            let acceptedTokens = Set(fixture.sandbox.received().filter { $0.status == 200 }.map(\.token))
            #expect(acceptedTokens == Set(tokens))
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
        }
    }

}
