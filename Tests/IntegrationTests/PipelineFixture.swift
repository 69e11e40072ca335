import AMQP
import APNs
import Foundation
import HTTP2
import Logging
import PushCore
import Redis
import Sandbox
import Testing
import Worker
import APNsTokenSharing
import PlatformCatalog
import WorkerConfigurationFile

/// One isolated world per test: its own queue names, results exchange and Redis key prefix on the
/// shared RabbitMQ and Redis, a sandbox on an ephemeral port, and an in-process worker.
final class PipelineFixture: @unchecked Sendable {
    static let amqpURL = ProcessInfo.processInfo.environment["AMQP_URL"] ?? "amqp://guest:guest@127.0.0.1:5672/"
    static let redisURL = ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379/0"

    let name: String
    let sandbox: APNsSandbox
    let port: Int
    let stateDirectory: String
    let logger: Logger
    let control: AMQPClient
    let redis: RedisClient
    var worker: PushWorker?
    /// The last started worker's: a quorum job queue is the worker's to declare.
    var queueType = QueueType.classic
    private var workerTask: Task<Void, any Error>?
    let eventQueue: String

    var jobQueue: String { "\(name).jobs" }
    var deadQueue: String { "\(name).jobs.dead" }
    var resultsExchange: String { "\(name).results" }
    var groupPrefix: String { "\(name):group:" }

    init(sandbox configure: (inout SandboxConfiguration) -> Void = { _ in }) async throws {
        name = "it.\(UUID().uuidString.prefix(8).lowercased())"
        var logger = Logger(label: "it")
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        self.logger = logger
        stateDirectory = NSTemporaryDirectory() + "pushworker-it-sandbox"
        var configuration = SandboxConfiguration()
        configuration.port = 0
        configuration.stateDirectory = stateDirectory
        configure(&configuration)
        sandbox = APNsSandbox(configuration: configuration, logger: logger)
        port = try await sandbox.start()
        eventQueue = "\(name).events"
        control = AMQPClient(configuration: AMQPConfiguration(url: Self.amqpURL), topology: [
            .exchange(name: "\(name).results", type: "topic", arguments: ["alternate-exchange": .string("\(name).results.unrouted")]),
            .queue(name: eventQueue, durable: false, arguments: ["x-expires": .int(120_000)]),
            .binding(queue: eventQueue, exchange: "\(name).results", routingKey: "#"),
        ], logger: logger)
        control.start()
        // A missing broker must fail the test loudly, not skip it.
        try await control.waitUntilConnected(timeout: .seconds(15))
        redis = RedisClient(configuration: try RedisConfiguration(url: Self.redisURL), logger: logger)
        try await redis.ping()
    }

    func tokenCredentials() throws -> APNsConfiguration.Credentials {
        let material = sandbox.material
        return .token(try APNsTokenProvider(keyFile: material.tokenKeyFile, keyID: material.tokenKeyID, teamID: material.teamID))
    }

    func workerConfiguration(credentials: APNsConfiguration.Credentials? = nil, retryDelays: [Duration] = [.milliseconds(300), .milliseconds(300)],
                             chunkSize: Int = 1000, requestTimeout: Duration = .seconds(5)) throws -> WorkerConfiguration {
        var apns = APNsConfiguration(environment: .development, url: "https://127.0.0.1:\(port)", credentials: try credentials ?? tokenCredentials(), topic: "com.example.app")
        apns.extraCAFile = sandbox.material.caCertificateFile
        apns.requestTimeout = requestTimeout
        apns.maxConnections = 2
        var configuration = WorkerConfiguration(amqp: AMQPConfiguration(url: Self.amqpURL), redis: try RedisConfiguration(url: Self.redisURL), apps: ["default": apns])
        configuration.jobQueue = jobQueue
        configuration.deadQueue = deadQueue
        configuration.resultsExchange = resultsExchange
        configuration.groupKeyPrefix = groupPrefix
        configuration.chunkSize = chunkSize
        configuration.retry = RetryPolicy(delays: retryDelays, jobQueue: jobQueue)
        configuration.shutdownTimeout = .seconds(5)
        // Tests beside each other share the sandbox's key: each shares tokens only within itself.
        configuration.providerTokenKeyPrefix = "\(name):jwt:"
        configuration.jobPlatforms = Platform.allJobRules
        return configuration
    }

    /// - Parameter logger: the worker's, when a test reads what it logs (else the fixture's).
    func startWorker(_ configuration: WorkerConfiguration, metrics: WorkerMetrics = WorkerMetrics(), logger: Logger? = nil) throws {
        let worker = try PushWorker(configuration: configuration, credentialStore: Self.providerTokens(configuration, logger: logger ?? self.logger),
                                    logger: logger ?? self.logger, metrics: metrics)
        self.worker = worker
        queueType = configuration.queueType
        workerTask = Task { try await worker.run() }
    }

    /// The executable's credential store: APNs provider tokens shared through Redis.
    static func providerTokens(_ configuration: WorkerConfiguration, logger: Logger) -> APNsProviderTokenStore {
        APNsProviderTokenStore(settings: configuration.providerTokenSharing, logger: logger)
    }

    /// Stops the worker and waits for it to end (its connections closed: what it held is requeued).
    func stopWorker() async {
        worker?.stop()
        _ = try? await workerTask?.value
        worker = nil
        workerTask = nil
    }

    /// Publishes a job body (confirmed) to this fixture's job queue.
    func publish(_ json: String, messageID: String? = nil) async throws {
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.messageID = messageID
        if queueType == .quorum {
            // Declared by the worker as it connects: wait for it (a passive declare fails until then).
            let deadline = ContinuousClock.now + .seconds(30)
            while (try? await control.declare([.existingQueue(name: jobQueue)])) == nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        } else {
            try await control.declare([.queue(name: jobQueue)])
        }
        // A nack means "not stored, publish again", as any confirming publisher does: a quorum queue
        // whose Raft group has just formed on a busy broker nacks its first publishes now and then.
        var attempt = 1
        while true {
            let result: Result<Void, AMQPError>
            do {
                try await control.publish(exchange: "", routingKey: jobQueue, body: Array(json.utf8), properties: properties)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            guard case .failure(let error) = result, error.code == .nacked, attempt < 5 else { return try result.get() }
            try await Task.sleep(for: .milliseconds(100 * attempt))
            attempt += 1
        }
    }

    /// Collects events until `done` says enough, or fails after `timeout`.
    func events(timeout: Duration = .seconds(20), until done: ([Event]) -> Bool) async throws -> [Event] {
        var collected = [Event]()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let delivery = try await control.get(queue: eventQueue) {
                collected.append(try Event(delivery))
                if done(collected) { return collected }
            } else {
                // Asked again with no new event too: `done` may also look at the sandbox.
                if done(collected) { return collected }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        Issue.record("timed out waiting for events; got \(collected.map(\.routingKey))")
        return collected
    }

    func addToGroup(_ group: String, _ tokens: [String]) async throws {
        for start in stride(from: 0, to: tokens.count, by: 1000) {
            _ = try await redis.setAdd(key: "\(groupPrefix)default:\(group)", members: Array(tokens[start..<min(start + 1000, tokens.count)]))
        }
    }

    func shutdown() async {
        worker?.stop()
        _ = try? await workerTask?.value
        let lanes = [jobQueue, "\(jobQueue).bulk"]
        let delayQueues = lanes.flatMap { lane in RetryPolicy(delays: [.milliseconds(300)], jobQueue: lane).queueNames.map(\.name) }
        for queue in lanes + [deadQueue, eventQueue, "\(resultsExchange).unrouted", "\(jobQueue).delay"] + delayQueues {
            try? await control.deleteQueue(queue)
        }
        await control.shutdown()
        await sandbox.stop()
    }

    struct Event: Sendable {
        let routingKey: String
        let fields: [String: JSONValue]
        init(_ delivery: AMQPDelivery) throws {
            routingKey = delivery.routingKey
            guard case let .object(object) = try JSONValue.parse(delivery.body) else { throw JobRejection(field: nil, "event is not an object") }
            fields = object
        }
        func int(_ key: String) -> Int? { fields[key]?.exactInteger }
        func string(_ key: String) -> String? { if case let .string(text)? = fields[key] { text } else { nil } }
    }

    static func token(_ seed: Int) -> String {
        // 64 hex characters, distinct per seed.
        let hex = String(seed, radix: 16)
        return "f" + String(repeating: "0", count: 63 - hex.count) + hex
    }
}

extension PipelineFixture {
    /// Runs `body` with a fresh fixture and always tears it down before returning.
    static func with(sandbox configure: (inout SandboxConfiguration) -> Void = { _ in },
                     _ body: (PipelineFixture) async throws -> Void) async throws {
        let fixture = try await PipelineFixture(sandbox: configure)
        do {
            try await body(fixture)
        } catch {
            await fixture.shutdown()
            throw error
        }
        await fixture.shutdown()
    }
}
