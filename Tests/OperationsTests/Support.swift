import AMQP
import Foundation
import Logging
import PushCore
import Redis
import Testing
@testable import Worker

/// The real broker and Redis (AMQP_URL, REDIS_URL); a missing one fails the tests, never skips them.
enum Services {
    static var amqpURL: String { ProcessInfo.processInfo.environment["AMQP_URL"] ?? "amqp://guest:guest@127.0.0.1:5672/" }
    static var redisURL: String { ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379/0" }

    /// Queues and keys of their own per test: tests run in parallel, and other suites share the broker.
    static func uniqueName(_ purpose: String) -> String {
        "pushworker-test.ops.\(purpose).\(UUID().uuidString.prefix(8).lowercased())"
    }

    static var logger: Logger {
        var logger = Logger(label: "operations-test")
        logger.logLevel = .critical
        return logger
    }

    static func broker() async throws -> AMQPClient {
        var configuration = AMQPConfiguration(url: amqpURL)
        configuration.connectionName = uniqueName("connection")
        let client = AMQPClient(configuration: configuration, topology: [], logger: logger)
        client.start()
        do { try await client.waitUntilConnected(timeout: .seconds(10)) } catch {
            await client.shutdown()
            throw error
        }
        return client
    }

    static func redis() throws -> RedisClient {
        RedisClient(configuration: try RedisConfiguration(url: redisURL), logger: logger)
    }

    /// Runs `body` with a connected client and the named queues declared, and removes them after.
    static func withQueues<Result>(_ queues: [String], _ body: (AMQPClient) async throws -> Result) async throws -> Result {
        let amqp = try await broker()
        do {
            try await amqp.declare(queues.map { .queue(name: $0) })
            let result = try await body(amqp)
            for queue in queues { try? await amqp.deleteQueue(queue) }
            await amqp.shutdown()
            return result
        } catch {
            for queue in queues { try? await amqp.deleteQueue(queue) }
            await amqp.shutdown()
            throw error
        }
    }
}

/// Dead-letter copies as the worker makes them (`DeadLetterCopy`), so the commands are tested
/// against what the worker really writes.
enum DeadCopies {
    static let token = String(repeating: "ab", count: 32)

    static func job(id: String, app: String = "news", attempts: Int? = nil) -> [UInt8] {
        let extra = attempts.map { ",\"attempts\":\($0)" } ?? ""
        return Array("{\"id\":\"\(id)\",\"app\":\"\(app)\",\"tokens\":[\"\(token)\"],\"payload\":{\"aps\":{\"alert\":\"hi\"}}\(extra)}".utf8)
    }

    /// Publishes the copy `reject` would publish for a job with `body` (cut like an oversized one when `truncatedFrom` is set).
    static func publish(_ amqp: AMQPClient, to deadQueue: String, body: [UInt8], field: String? = "payload.aps",
                        error: String = "is required", truncatedFrom: Int? = nil, headers: [String: AMQPFieldValue] = [:]) async throws {
        var original = AMQPProperties(contentType: "application/json", messageID: "message-\(UUID().uuidString.prefix(6))", headers: headers)
        original.persistent = true
        let delivery = AMQPDelivery(tag: AMQPDeliveryTag(connectionGeneration: 1, value: 1), body: body, properties: original,
                                    exchange: "", routingKey: "push.jobs", redelivered: false, discardedBodySize: truncatedFrom)
        let properties = DeadLetterCopy.properties(of: delivery, rejection: JobRejection(field: field, error),
                                                   now: UnixTime(milliseconds: 1_700_000_000_000))
        try await amqp.publish(exchange: "", routingKey: deadQueue, body: body, properties: properties, mandatory: true)
    }

    /// Takes every message of `queue` (basic.get with ack): what a worker would consume.
    static func drain(_ amqp: AMQPClient, _ queue: String) async throws -> [AMQPDelivery] {
        var taken: [AMQPDelivery] = []
        while let delivery = try await amqp.get(queue: queue) { taken.append(delivery) }
        return taken
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
