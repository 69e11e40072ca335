import AMQP
import APNs
import APNsCore
import Foundation
import PushCore
import Sandbox
import Testing
@testable import Worker

/// One worker, two apps on one job queue: app A's trouble never stops app B.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct AppIsolationTests {
    /// A's key is revoked (the sandbox answers 403 InvalidProviderToken for A's topic) while both
    /// apps publish 300 jobs. Every B job is delivered while A is still refused; A's jobs wait in
    /// the delay queues and are all delivered once after the key works again; nothing is
    /// dead-lettered; and the republishing a hold costs the broker stays within its bound: each held
    /// job once per delay of the ladder.
    @Test func aRevokedKeyHoldsItsAppWhileTheOtherAppsJobsFlow() async throws {
        let revoked = SandboxRule(topic: "com.example.a", reason: .invalidProviderToken)
        try await PipelineFixture.with(sandbox: { $0.rules = [revoked] }) { fixture in
            // APNs' own timeout: a request merely slow on a loaded machine is not retried (and sent twice).
            var configuration = try fixture.workerConfiguration(requestTimeout: .seconds(30))
            let template = try #require(configuration.apps["default"])
            var appA = template, appB = template
            appA.topic = "com.example.a"
            appB.topic = "com.example.b"
            configuration.apps = ["a": appA, "b": appB]
            configuration.credentialsRetryInterval = .milliseconds(500)
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)

            // Enough to keep both apps' jobs interleaved on the queue; light enough for suites running beside it.
            let jobs = 300
            let tokensA = (0..<jobs).map { PipelineFixture.token(60_000 + $0) }
            let tokensB = (0..<jobs).map { PipelineFixture.token(70_000 + $0) }
            var publishedB: [String: ContinuousClock.Instant] = [:]
            let holdStarted = ContinuousClock.now
            for index in 0..<jobs {
                try await fixture.publish(#"{"id":"a-\#(index)","app":"a","tokens":["\#(tokensA[index])"],"payload":{"aps":{"alert":"a"}}}"#)
                publishedB[tokensB[index]] = .now
                try await fixture.publish(#"{"id":"b-\#(index)","app":"b","tokens":["\#(tokensB[index])"],"payload":{"aps":{"alert":"b"}}}"#)
            }
            // Observed progress: every B job delivered, while A's key is still refused.
            try await waitUntil("every job of app b is delivered", timeout: .seconds(90)) {
                Set(fixture.sandbox.received().filter { $0.topic == "com.example.b" && $0.status == 200 }.map(\.token)).count == jobs
            }
            let whileHeld = fixture.sandbox.received()
            #expect(!whileHeld.contains { $0.topic == "com.example.a" && $0.status == 200 }, "A's key is still revoked")
            #expect(worker.status.snapshot.credentialProblems["b"] == nil)
            var latencies = whileHeld.filter { $0.topic == "com.example.b" && $0.status == 200 }
                .compactMap { received in publishedB[received.token].map { received.receivedAt - $0 } }
            latencies.sort()
            let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            // Reported, not asserted: timings belong to the benchmark.
            print("app b while app a was held: \(latencies.count) deliveries, p50 \(latencies[latencies.count / 2]), p99 \(p99)")

            // The key works again: A resumes by itself within the retry interval and the longest hold delay.
            fixture.sandbox.setRules([])
            let holdEnded = ContinuousClock.now
            try await waitUntil("every job of app a is delivered", timeout: .seconds(120)) {
                Set(fixture.sandbox.received().filter { $0.topic == "com.example.a" && $0.status == 200 }.map(\.token)).count == jobs
            }
            let accepted = fixture.sandbox.received().filter { $0.status == 200 }
            let acceptedA = accepted.filter { $0.topic == "com.example.a" }.map(\.token)
            #expect(acceptedA.count == jobs && Set(acceptedA) == Set(tokensA), "each A job once")
            #expect(accepted.filter { $0.topic == "com.example.b" }.count == jobs, "each B job once")
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            // The hold's cost: each held job republished at most once per delay (0.3 s here) while held.
            let heldSeconds = Backoff.seconds(holdEnded - holdStarted) + Backoff.seconds(JobProcessor.longestHoldDelay)
            let deferred = worker.status.snapshot.deferred
            let bound = Int(Double(jobs) * (heldSeconds / 0.3 + 2))
            print("app a held \(heldSeconds) s: \(deferred) republishes (bound \(bound))")
            #expect(deferred <= bound)
            #expect(deferred > 0, "A's jobs waited in the delay queues")
        }
    }

}
