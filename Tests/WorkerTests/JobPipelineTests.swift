import AMQP
import APNsCore
import Logging
import NIOConcurrencyHelpers
import PushCore
import PushTransport
import Redis
import Testing
@testable import Worker

/// The job pipeline (parse, send, settle, publish with confirms, ack) over a scripted transport
/// and a recording broker: settlement, holds, retries and app isolation in milliseconds, without
/// RabbitMQ. The integration suites prove the same against the real broker and the sandbox.
@Suite struct JobPipelineTests {
    /// A processor and the loops it needs, for the apps given.
    final class Pipeline: Sendable {
        let broker: RecordingBroker
        let processor: JobProcessor
        let gate: ConsumptionGate
        private let delayed = DelayedWork()
        private let tasks = JobTasks()
        private let loops: NIOLockedValueBox<[Task<Void, Never>]>
        private let tag = NIOLockedValueBox<UInt64>(0)

        init(apps: [String: any PushTransport], broker: RecordingBroker = RecordingBroker()) throws {
            self.broker = broker
            let logger = Logger(label: "pipeline-tests")
            var configuration = WorkerConfiguration(amqp: AMQPConfiguration(url: "amqp://127.0.0.1/"),
                                                    redis: try .init(url: "redis://127.0.0.1:1"), apps: [:])
            configuration.jobPlatforms = [APNsJobRules()]
            configuration.retry = RetryPolicy(delays: [.seconds(1), .seconds(5)], jobQueue: configuration.jobQueue)
            let metrics = WorkerMetrics()
            let served = apps.mapValues { transport in
                ServedApp(transport: transport, rules: APNsJobRules(), pruneInvalidTokens: false,
                          metrics: metrics.appMetrics(app: "app", platform: "apns"))
            }
            let status = WorkerStatus(metrics: metrics)
            let gate = ConsumptionGate(amqp: broker, status: status, configuration: configuration, delayed: delayed, logger: logger)
            self.gate = gate
            let results = ResultPublisher(amqp: broker, gate: gate, status: status, delayed: delayed, topology: configuration.topology)
            // Not reached: these jobs name their devices (no group, no fan-out, no redelivery).
            let redis = RedisClient(configuration: configuration.redis, logger: logger)
            processor = JobProcessor(configuration: configuration, amqp: broker, redis: redis, roster: AppRoster(apps: served),
                                     status: status, gate: gate, results: results, tasks: tasks, logger: logger)
            let delayed = delayed, tasks = tasks
            loops = NIOLockedValueBox([Task { await delayed.run() }, Task { await tasks.run() }])
        }

        /// Hands a job to the processor as the AMQP thread would; returns its delivery tag.
        @discardableResult
        func deliver(_ json: String, settled: @escaping @Sendable () -> Void = {}) -> UInt64 {
            let value = tag.withLockedValue { tag in
                tag += 1
                return tag
            }
            let delivery = AMQPDelivery(tag: AMQPDeliveryTag(connectionGeneration: 1, value: value), body: Array(json.utf8),
                                        properties: AMQPProperties(), exchange: "", routingKey: "push.jobs", redelivered: false)
            processor.start(delivery, settled: settled)
            return value
        }

        func close() async {
            delayed.close()
            tasks.close()
            for loop in loops.withLockedValue({ $0 }) { await loop.value }
        }
    }

    static let token = String(repeating: "ab", count: 32)
    static func token(_ digit: Character) -> String { String(repeating: digit, count: 64) }

    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        // Progress, not time: every step is in memory; the bound only ends a broken test.
        for _ in 0..<2_000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("never happened: \(what)")
    }

    @Test func aDeliveredJobIsAckedOnlyAfterItsEventIsConfirmed() async throws {
        let broker = RecordingBroker { _ in nil }
        let transport = RecordingTransport()
        let pipeline = try Pipeline(apps: ["news": transport], broker: broker)
        let tag = pipeline.deliver(#"{"app":"news","tokens":["\#(Self.token)"],"payload":{"aps":{"alert":"hi"}}}"#)
        try await Self.waitUntil("job.completed published") { !broker.published.isEmpty }
        #expect(transport.sent.map(\.device.given) == [Self.token])
        #expect(broker.acked.isEmpty, "not acked before the broker confirmed its event")
        broker.confirmHeld()
        try await Self.waitUntil("acked") { !broker.acked.isEmpty }
        #expect(broker.steps == [.published(routingKey: "job.completed"), .acked(tag)])
        await pipeline.close()
    }

    @Test func aRetryableDeviceGoesToTheDelayQueueAndTheOthersAreDone() async throws {
        let busy = Self.token("b"), gone = Self.token("c"), fine = Self.token("d")
        let transport = RecordingTransport { device in
            switch device.given {
            case busy: PushResult(status: 429, reason: "TooManyRequests", outcome: .retryable(reason: "TooManyRequests"))
            case gone: PushResult(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_000, outcome: .tokenInvalid(reason: "Unregistered"))
            default: RecordingTransport.accepted
            }
        }
        let pipeline = try Pipeline(apps: ["news": transport])
        let tag = pipeline.deliver(#"{"id":"j1","app":"news","tokens":["\#(busy)","\#(gone)","\#(fine)"],"payload":{"aps":{}}}"#)
        try await Self.waitUntil("acked") { !pipeline.broker.acked.isEmpty }
        let keys = pipeline.broker.published.map(\.routingKey)
        #expect(keys == ["token.invalid", "push.jobs.retry.1s", "job.completed"])
        let retry = try #require(pipeline.broker.published.first { $0.routingKey == "push.jobs.retry.1s" })
        let retried = try JobParser(rules: APNsJobRules()).parse(retry.body, messageID: nil, now: 0, makeID: { "x" })
        #expect(retried.tokens.map(\.given) == [busy] && retried.attempts == 1 && retried.id == "j1")
        #expect(pipeline.broker.acked == [tag])
        await pipeline.close()
    }

    @Test func anAppWhoseKeyIsRefusedIsHeldAndTheOtherGoesOn() async throws {
        let refused = RecordingTransport { _ in
            PushResult(status: 403, reason: "InvalidProviderToken", outcome: .credentialsProblem(reason: "InvalidProviderToken"))
        }
        let healthy = RecordingTransport()
        let pipeline = try Pipeline(apps: ["a": refused, "b": healthy])
        pipeline.deliver(#"{"app":"a","tokens":["\#(Self.token("1"))"],"payload":{"aps":{}}}"#)
        try await Self.waitUntil("a's job settled") { pipeline.broker.acked.count == 1 }
        #expect(pipeline.gate.isHeld(app: "a") && !pipeline.gate.isHeld(app: "b"))
        // The held device went back to the job queue, its attempt untouched.
        let held = try #require(pipeline.broker.published.first { $0.routingKey == "push.jobs" })
        let job = try JobParser(rules: APNsJobRules()).parse(held.body, messageID: nil, now: 0, makeID: { "x" })
        #expect(job.attempts == 0 && job.tokens.map(\.given) == [Self.token("1")])
        // While a is held, its next job waits in a delay queue unsent; b's is sent.
        pipeline.deliver(#"{"app":"a","tokens":["\#(Self.token("2"))"],"payload":{"aps":{}}}"#)
        pipeline.deliver(#"{"app":"b","tokens":["\#(Self.token("3"))"],"payload":{"aps":{}}}"#)
        try await Self.waitUntil("both settled") { pipeline.broker.acked.count == 3 }
        #expect(refused.sent.count == 1, "a's second job was not sent")
        #expect(healthy.sent.map(\.device.given) == [Self.token("3")])
        #expect(pipeline.broker.published.contains { $0.routingKey == "push.jobs.retry.1s" && String(decoding: $0.body, as: UTF8.self).contains(Self.token("2")) })
        await pipeline.close()
    }

    @Test func aNackedEventIsPublishedAgainAndTheJobAckedOnce() async throws {
        let tries = NIOLockedValueBox(0)
        let broker = RecordingBroker { _ in
            tries.withLockedValue { tries in
                tries += 1
                return tries == 1 ? .failure(AMQPError(code: .nacked, message: "nacked")) : .success(())
            }
        }
        let pipeline = try Pipeline(apps: ["news": RecordingTransport()], broker: broker)
        let tag = pipeline.deliver(#"{"app":"news","tokens":["\#(Self.token)"],"payload":{"aps":{}}}"#)
        try await Self.waitUntil("acked") { !broker.acked.isEmpty }
        #expect(broker.steps == [.published(routingKey: "job.completed"), .published(routingKey: "job.completed"), .acked(tag)])
        await pipeline.close()
    }

    @Test func anExpiredJobIsReportedUnsentFromTheTaskPath() async throws {
        let transport = RecordingTransport()
        let pipeline = try Pipeline(apps: ["news": transport])
        let expiration = UnixTime.now().seconds - 60
        let tag = pipeline.deliver(#"{"app":"news","tokens":["\#(Self.token("e"))","\#(Self.token("f"))"],"expiration":\#(expiration),"payload":{"aps":{}}}"#)
        try await Self.waitUntil("acked") { !pipeline.broker.acked.isEmpty }
        #expect(pipeline.broker.published.map(\.routingKey) == ["delivery.failed", "delivery.failed", "job.completed"])
        let failure = String(decoding: pipeline.broker.published[0].body, as: UTF8.self)
        #expect(failure.contains("Expired"))
        #expect(transport.sent.isEmpty && pipeline.broker.acked == [tag])
        await pipeline.close()
    }

    @Test func aBulkJobFromTheJobQueueMovesToTheBulkLaneUnsent() async throws {
        let transport = RecordingTransport()
        let pipeline = try Pipeline(apps: ["news": transport])
        let tag = pipeline.deliver(#"{"app":"news","bulk":true,"tokens":["\#(Self.token)"],"payload":{"aps":{}}}"#)
        try await Self.waitUntil("acked") { !pipeline.broker.acked.isEmpty }
        #expect(pipeline.broker.published.map(\.routingKey) == ["push.jobs.bulk"])
        #expect(transport.sent.isEmpty && pipeline.broker.acked == [tag])
        await pipeline.close()
    }

    @Test func aJobThatIsNoJobGoesToTheDeadQueueWithAnEvent() async throws {
        let transport = RecordingTransport()
        let pipeline = try Pipeline(apps: ["news": transport])
        let tag = pipeline.deliver(#"{"app":"news","tokens":["short"],"payload":{"aps":{}}}"#)
        try await Self.waitUntil("acked") { !pipeline.broker.acked.isEmpty }
        #expect(pipeline.broker.published.map(\.routingKey) == ["push.jobs.dead", "job.rejected"])
        #expect(transport.sent.isEmpty && pipeline.broker.acked == [tag])
        await pipeline.close()
    }
}
