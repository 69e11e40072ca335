import AMQP
import Foundation
import PushCore
import Sandbox
import Testing
import Worker

/// `--queue-type quorum` against the real RabbitMQ and the sandbox: the lanes, delay and dead
/// queues are quorum queues, and retries wait in the delay queue, held by a worker until due.
@Suite(.serialized) struct QuorumQueueTests {
    static func quorum(_ fixture: PipelineFixture, retryDelays: [Duration] = [.milliseconds(300), .milliseconds(300)]) throws -> WorkerConfiguration {
        var configuration = try fixture.workerConfiguration(retryDelays: retryDelays)
        configuration.queueType = .quorum
        return configuration
    }

    @Test func retryGoesThroughTheDelayQueueAndNoTTLQueueIsDeclared() async throws {
        let flaky = PipelineFixture.token(503)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: flaky, status: 503, reason: "ServiceUnavailable", times: 1)] }) { fixture in
            let configuration = try Self.quorum(fixture)
            try fixture.startWorker(configuration)
            try await fixture.publish(#"{"id":"q-503","tokens":["\#(flaky)","\#(PipelineFixture.token(2))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.filter { $0.routingKey == "job.completed" }.count == 2 }
            let completions = events.filter { $0.routingKey == "job.completed" }
            let completionAttempts = completions.map { $0.int("attempt") }
            #expect(completionAttempts == [1, 2])
            #expect(completions[1].int("sent") == 1 && completions[1].int("devices") == 1)
            let flakyStatuses = fixture.sandbox.received().filter { $0.token == flaky }.map(\.status)
            #expect(flakyStatuses == [503, 200])
            #expect(try await fixture.control.messageCount(queue: configuration.delayQueue) == 0)
            // The classic ladder's TTL queues are not used: they do not exist.
            for (name, _) in configuration.retry.queueNames {
                await #expect(throws: AMQPError.self) { try await fixture.control.messageCount(queue: name) }
            }
        }
    }

    /// A worker that stops holds its retries back: they return to the delay queue unreleased, with
    /// their due time, and the next worker releases them once due.
    @Test func aStoppingWorkerLeavesHeldRetriesForTheNext() async throws {
        let flaky = PipelineFixture.token(7503)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: flaky, status: 503, reason: "ServiceUnavailable", times: 1)] }) { fixture in
            // Far longer than the test: released early only by a bug.
            let configuration = try Self.quorum(fixture, retryDelays: [.seconds(600)])
            try fixture.startWorker(configuration)
            try await fixture.publish(#"{"id":"q-held","tokens":["\#(flaky)"],"payload":{"aps":{"alert":"x"}}}"#)
            // Confirmed into the delay queue before this event was published with it.
            _ = try await fixture.events { $0.contains { $0.routingKey == "job.completed" && $0.int("retried") == 1 } }
            let before = UnixTime.now()
            // Held by the worker (unacked), so the queue shows nothing ready until the worker stops.
            await fixture.stopWorker()
            let held = try #require(try await waitForMessage(fixture, queue: configuration.delayQueue))
            // Nothing was released early into the job queue on the way out.
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 0)
            guard case .int(let due)? = held.properties.headers["x-pushworker-due"] else {
                Issue.record("no due time on the held retry: \(held.properties.headers)")
                return
            }
            #expect(due > before.milliseconds + 500_000)
            #expect(held.properties.headers["x-pushworker-lane"] == .string(fixture.jobQueue))
            let flakyStatusesWhileHeld = fixture.sandbox.received().filter { $0.token == flaky }.map(\.status)
            #expect(flakyStatusesWhileHeld == [503])

            // As if its time had come: the next worker releases it to the job queue, and it is sent.
            var properties = held.properties
            properties.headers["x-pushworker-due"] = .int(UnixTime.now().milliseconds)
            try await fixture.control.publish(exchange: "", routingKey: configuration.delayQueue, body: held.body, properties: properties)
            try fixture.startWorker(configuration)
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" && $0.int("attempt") == 2 } }
            let retrySent = events.contains { $0.routingKey == "job.completed" && $0.int("attempt") == 2 && $0.int("sent") == 1 }
            #expect(retrySent)
            let flakyStatuses = fixture.sandbox.received().filter { $0.token == flaky }.map(\.status)
            #expect(flakyStatuses == [503, 200])
        }
    }

    /// Got with auto-ack once the worker has returned it (bounded wait on the queue, not a sleep).
    private func waitForMessage(_ fixture: PipelineFixture, queue: String) async throws -> AMQPDelivery? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let delivery = try await fixture.control.get(queue: queue) { return delivery }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test func quorumSettingsAreChecked() throws {
        // Exercised through the settings layer in ConfigurationTests; here the declared topology.
        var configuration = WorkerConfiguration(amqp: AMQPConfiguration(url: "amqp://127.0.0.1/"), redis: try .init(url: "redis://127.0.0.1"), apps: [:])
        configuration.queueType = .quorum
        let queues = configuration.topology.compactMap { declaration -> (String, [String: AMQPFieldValue])? in
            if case let .queue(name, _, arguments) = declaration { (name, arguments) } else { nil }
        }
        let byName = Dictionary(queues, uniquingKeysWith: { first, _ in first })
        for lane in [configuration.jobQueue, configuration.bulkQueue] {
            #expect(byName[lane]?["x-queue-type"] == .string("quorum"))
            #expect(byName[lane]?["x-delivery-limit"] == .int(Int64(WorkerConfiguration.quorumDeliveryLimit)))
            #expect(byName[lane]?["x-dead-letter-routing-key"] == .string(configuration.deadQueue))
        }
        #expect(byName[configuration.delayQueue]?["x-queue-type"] == .string("quorum"))
        #expect(byName[configuration.deadQueue]?["x-queue-type"] == .string("quorum"))
        #expect(!byName.keys.contains { $0.contains(".retry.") })
    }
}
