import AMQP
import Logging
import PushCore
import Testing
import Worker
import WorkerConfigurationFile

/// A job for an app the worker does not serve yet (a rollout adding it to N workers' files) waits in
/// the delay queues for `unknownAppGrace`, against the real RabbitMQ and the APNs sandbox; with no
/// grace, or once it is over, it is dead-lettered as before.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct UnknownAppRolloutTests {
    static func job(_ id: String, token: Int) -> String {
        #"{"id":"\#(id)","app":"late","tokens":["\#(PipelineFixture.token(token))"],"payload":{"aps":{"alert":"late"}}}"#
    }

    static let holdWarning = "job for an app this worker does not serve"

    /// Held (looked at again and again, never dead-lettered, logged once), then sent once a reload
    /// adds the app: delivered to the sandbox exactly once.
    @Test func heldUntilAReloadAddsTheAppThenDelivered() async throws {
        try await PipelineFixture.with { fixture in
            let lines = RecordingLogHandler.Lines()
            var logger = Logger(label: "it") { _ in RecordingLogHandler(lines: lines, minimum: .warning) }
            logger.logLevel = .warning
            let configuration = try fixture.workerConfiguration()
            #expect(configuration.unknownAppGrace == .seconds(300), "the default grace holds it")
            try fixture.startWorker(configuration, logger: logger)
            let worker = try #require(fixture.worker)

            try await fixture.publish(Self.job("late-1", token: 4201))
            // Three looks: held, and back from the delay queue and held again, twice.
            try await waitUntil("the job went round the delay queues") { worker.status.snapshot.deferred >= 3 }
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            #expect(worker.status.snapshot.rejected == 0)
            #expect(fixture.sandbox.received().isEmpty)
            #expect(lines.count(containing: Self.holdWarning) == 1, "one warning per job and hold, not per look")
            #expect(lines.count(containing: "push.app=late") >= 1, "the warning names the app")

            let apns = try #require(configuration[apns: "default"])
            try await worker.reload(apps: ["default": apns, "late": apns], unchanged: ["default"])

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" && $0.string("job_id") == "late-1" } }
            let completedEvent = events.first { $0.routingKey == "job.completed" }
            let completed = try #require(completedEvent)
            #expect(completed.string("app") == "late" && completed.int("sent") == 1)
            let anyRejected = events.contains { $0.routingKey == "job.rejected" }
            #expect(!anyRejected)
            let received = fixture.sandbox.received().filter { $0.token == PipelineFixture.token(4201) }
            #expect(received.count == 1 && received.first?.status == 200, "delivered once")
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            #expect(lines.count(containing: Self.holdWarning) == 1)
        }
    }

    /// `unknownAppGrace` 0: dead-lettered at once with the reason it always had, never held.
    @Test func withoutAGraceDeadLetteredAtOnce() async throws {
        try await PipelineFixture.with { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.unknownAppGrace = .zero
            try fixture.startWorker(configuration)
            try await fixture.publish(Self.job("late-2", token: 4202))
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.rejected" } }
            try await Self.expectDeadLettered(events, fixture: fixture)
            #expect(fixture.worker?.status.snapshot.deferred == 0, "not held")
        }
    }

    /// A grace shorter than the delay queue's wait: held once, and at the next look (which the
    /// delay queue's TTL makes at least 300 ms later) dead-lettered as before.
    @Test func afterTheGraceDeadLetteredAsBefore() async throws {
        try await PipelineFixture.with { fixture in
            var configuration = try fixture.workerConfiguration(retryDelays: [.milliseconds(300)])
            configuration.unknownAppGrace = .milliseconds(100)
            try fixture.startWorker(configuration)
            try await fixture.publish(Self.job("late-3", token: 4203))
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.rejected" } }
            try await Self.expectDeadLettered(events, fixture: fixture)
            #expect(fixture.worker?.status.snapshot.deferred == 1, "held once")
        }
    }

    static func expectDeadLettered(_ events: [PipelineFixture.Event], fixture: PipelineFixture) async throws {
        let rejected = try #require(events.first { $0.routingKey == "job.rejected" })
        #expect(rejected.string("field") == "app")
        #expect(rejected.string("error")?.contains(#"unknown app "late""#) == true, "\(String(describing: rejected.string("error")))")
        let dead = try #require(try await fixture.control.get(queue: fixture.deadQueue))
        guard case .string(let error)? = dead.properties.headers["x-pushworker-error"] else {
            Issue.record("no x-pushworker-error on the dead copy: \(dead.properties.headers)")
            return
        }
        #expect(error.hasPrefix(#"app: unknown app "late""#), "\(error)")
        #expect(dead.properties.headers[UnknownAppRolloutTests.firstSeenHeader] == nil, "the hold's bookkeeping is not in the dead copy")
        #expect(fixture.sandbox.received().isEmpty)
    }

    static let firstSeenHeader = "x-pushworker-unknown-app-since"
}
