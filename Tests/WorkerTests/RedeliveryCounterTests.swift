import AMQP
import Foundation
import Logging
import Redis
import Testing
@testable import Worker

@Suite struct RedeliveryCounterTests {
    /// A quorum queue's own count is used when it is there (it needs no Redis); classic queues
    /// carry none and fall back to the count kept in Redis.
    @Test func theBrokersDeliveryCountIsReadFromQuorumQueueHeaders() {
        #expect(RedeliveryCounter.brokerDeliveryCount(["x-delivery-count": .int(3)]) == 3)
        #expect(RedeliveryCounter.brokerDeliveryCount([:]) == nil)
        #expect(RedeliveryCounter.brokerDeliveryCount(["x-delivery-count": .int(0)]) == nil)
        #expect(RedeliveryCounter.brokerDeliveryCount(["x-delivery-count": .string("3")]) == nil)
    }
}

/// The count in Redis always expires: INCR then EXPIRE as two commands left a count without expiry
/// when a worker died between them, and the old code set the expiry only on the first count.
@Suite struct RedeliveryCounterRedisTests {
    @Test func everyCountStepLeavesTheKeyExpiring() async throws {
        let url = ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379/0"
        let redis = RedisClient(configuration: try RedisConfiguration(url: url), logger: Logger(label: "test"))
        let counter = RedeliveryCounter(redis: redis, jobQueue: "pushworker-test.redelivery", logger: Logger(label: "test"))
        let key = "pushworker-test:redelivered:\(UUID().uuidString)"
        defer { Task { _ = try? await redis.command(["DEL", key]) } }

        #expect(try await counter.step(key, by: 1) == .integer(1))
        guard case .integer(let ttl) = try await redis.command(["TTL", key]) else { Issue.record("no TTL reply"); return }
        #expect((1...3600).contains(ttl), "an expiry of at most the hour is set")
        #expect(try await counter.step(key, by: 1) == .integer(2))

        // As a crash between the two commands left it: a count without expiry. The next step fixes it.
        _ = try await redis.command(["SET", key, "1"])
        #expect(try await redis.command(["TTL", key]) == .integer(-1))
        #expect(try await counter.step(key, by: 1) == .integer(2))
        guard case .integer(let fixed) = try await redis.command(["TTL", key]) else { Issue.record("no TTL reply"); return }
        #expect(fixed > 0, "the count expires again")
        // A step back (a delivery handed back for lack of memory) keeps it expiring too.
        #expect(try await counter.step(key, by: -1) == .integer(1))
        guard case .integer(let after) = try await redis.command(["TTL", key]) else { Issue.record("no TTL reply"); return }
        #expect(after > 0)
    }
}
