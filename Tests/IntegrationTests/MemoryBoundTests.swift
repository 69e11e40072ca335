import AMQP
import Foundation
import PushCore
import Sandbox
import Testing
@testable import Worker

/// --max-bytes-in-flight holds whatever the prefetch: against real RabbitMQ, Redis and the sandbox.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct MemoryBoundTests {
    /// A prefetch of 40 jobs of 100 KiB, with APNs slow enough that they pile up: 8 MiB of bodies
    /// would be held, counted twice. With a 1 MiB cap, the bodies that find no room go back to the
    /// queue unread; every job is still delivered once, none is rejected or dead-lettered, and the
    /// bytes held never pass the cap.
    @Test func bodiesHeldNeverPassTheCapWhateverThePrefetch() async throws {
        try await PipelineFixture.with(sandbox: { $0.faults.latency = .milliseconds(300) }) { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.tunesPrefetch = false
            configuration.prefetch = 40
            configuration.maxBytesInFlight = 1 << 20
            let pad = String(repeating: "a", count: 100 * 1024)
            let jobs = 30
            // All in the queue before the worker starts: its prefetch then offers all 30 at once,
            // whatever the machine's speed, so the cap is met for sure (not by a publishing race).
            for index in 0..<jobs {
                try await fixture.publish(#"{"id":"big-\#(index)","tokens":["\#(PipelineFixture.token(5000 + index))"],"payload":{"aps":{"alert":"x"}},"x-pad":"\#(pad)"}"#)
            }
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let events = try await fixture.events(timeout: .seconds(60)) { events in
                events.filter { $0.routingKey == "job.completed" }.count >= jobs
            }
            let anyRejected = events.contains { $0.routingKey == "job.rejected" }
            #expect(!anyRejected)
            let tokens = fixture.sandbox.received().map(\.token)
            #expect(tokens.count == jobs && Set(tokens).count == jobs, "each job delivered once")
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            #expect(worker.bodyBytesPeak <= configuration.maxBytesInFlight,
                    "held \(worker.bodyBytesPeak) counted bytes; the cap is \(configuration.maxBytesInFlight)")
            #expect(worker.status.snapshot.handedBack > 0, "some bodies found no room")
        }
    }
}
