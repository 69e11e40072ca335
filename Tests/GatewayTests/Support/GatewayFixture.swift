import AMQP
import Foundation
import Gateway
import Logging
import Redis
import Testing

/// A gateway run in this process on a free port of 127.0.0.1 against the real RabbitMQ and Redis
/// (AMQP_URL, REDIS_URL), publishing to a job queue of its own; stopped and the queue deleted at
/// the end. A missing broker fails the test, it does not skip it.
struct GatewayFixture {
    static var amqpURL: String { ProcessInfo.processInfo.environment["AMQP_URL"] ?? "amqp://guest:guest@127.0.0.1:5672/" }
    static var redisURL: String { ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379/0" }

    let port: Int
    let jobQueue: String
    let broker: AMQPClient
    let gateway: Gateway
    /// What the gateway was started with.
    let settings: GatewaySettings

    static var logger: Logger {
        var logger = Logger(label: "gateway-test")
        logger.logLevel = ProcessInfo.processInfo.environment["GATEWAY_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }

    /// Runs `body` against a started gateway whose broker connection is up.
    static func with(clock: GatewayClock = .frozen(), configure: (inout GatewaySettings) -> Void,
                     _ body: @Sendable (GatewayFixture) async throws -> Void) async throws {
        var settings = GatewaySettings(amqp: AMQPConfiguration(url: amqpURL), redis: try RedisConfiguration(url: redisURL))
        settings.port = 0
        settings.jobQueue = "gateway-test.\(UUID().uuidString.prefix(8)).jobs"
        configure(&settings)
        let gateway = Gateway(settings: settings, logger: logger, clock: clock)
        let broker = try await connectedBroker()
        let queue = settings.jobQueue
        let started = settings
        var failure: (any Error)?
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                let (ports, listening) = AsyncStream.makeStream(of: Int.self)
                group.addTask { try await gateway.run { listening.yield($0) } }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                let fixture = GatewayFixture(port: port, jobQueue: queue, broker: broker, gateway: gateway, settings: started)
                try await fixture.waitUntilPublishing()
                try await body(fixture)
                group.cancelAll()
            }
        } catch is CancellationError {
            // The gateway's end when the group is cancelled.
        } catch {
            failure = error
        }
        try? await broker.deleteQueue(queue)
        await broker.shutdown()
        if let failure { throw failure }
    }

    static func connectedBroker() async throws -> AMQPClient {
        var configuration = AMQPConfiguration(url: amqpURL)
        configuration.connectionName = "gateway-test"
        let client = AMQPClient(configuration: configuration, topology: [], logger: logger)
        client.start()
        do { try await client.waitUntilConnected(timeout: .seconds(20)) } catch {
            await client.shutdown()
            throw error
        }
        return client
    }

    /// Until `/healthz` reports the broker connected (publishes before that are answered 503).
    func waitUntilPublishing() async throws {
        for _ in 0..<300 {
            if try await get("/healthz").body.contains(#""amqp":"connected""#) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the gateway did not connect to the broker within 30 s")
        throw CancellationError()
    }

    func get(_ path: String) async throws -> LoopbackHTTP.Answer {
        try await LoopbackHTTP.send(port: port, .GET, path)
    }

    func relay(_ path: String = "/relay-to/production/\(RelayPost.token)", headers: [(String, String)] = []) async throws -> LoopbackHTTP.Answer {
        try await LoopbackHTTP.send(port: port, .POST, path, headers: RelayPost.headers + headers, body: RelayPost.body)
    }

    func postJob(key: String) async throws -> LoopbackHTTP.Answer {
        let job = #"{"tokens":["\#(RelayPost.token)"],"payload":{"aps":{"alert":"hi"}}}"#
        return try await LoopbackHTTP.send(port: port, .POST, "/v1/jobs", headers: [("Authorization", "Bearer \(key)")], body: Array(job.utf8))
    }

    /// The statuses of `count` relay posts made one after another.
    func relayStatuses(_ count: Int) async throws -> [Int] {
        var statuses = [Int]()
        for _ in 0..<count { statuses.append(try await relay().status) }
        return statuses
    }

    func jobStatuses(_ count: Int, key: String) async throws -> [Int] {
        var statuses = [Int]()
        for _ in 0..<count { statuses.append(try await postJob(key: key).status) }
        return statuses
    }

    /// The jobs the broker holds for the workers.
    func queuedJobs() async throws -> Int {
        try await broker.messageCount(queue: jobQueue)
    }

    /// The gateway's counters as `/healthz` reports them.
    func counts() async throws -> [String: Int] {
        let body = try await get("/healthz").body
        let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return object?["counts"] as? [String: Int] ?? [:]
    }
}

/// A Web Push message as Mastodon posts one (aesgcm): any bytes pass as the ciphertext.
enum RelayPost {
    static let token = String(repeating: "ab", count: 32)
    static let body = Array("encrypted".utf8)
    static let headers = [
        ("Content-Encoding", "aesgcm"),
        ("Encryption", "salt=" + base64url((0..<16).map { UInt8(0xA0 + $0) })),
        ("Crypto-Key", "dh=" + base64url([0x04] + (1...64).map { UInt8($0) })),
        ("TTL", "60"),
    ]

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
