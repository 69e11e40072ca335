import AMQP
import Logging
import Redis

/// Counts how often a message came back without being settled: a worker crashed holding it, or
/// its connection dropped each time. Classic queues carry no delivery count, and a message that
/// kills every worker that reads it is never republished with a header, so the count lives in
/// Redis (`pushworker:redelivered:<digest>`, for an hour). Only deliveries the broker flags as
/// redelivered are counted, so first deliveries cost nothing. Redis trouble never blocks a job:
/// it is then simply not counted.
struct RedeliveryCounter: Sendable {
    static let expirySeconds = 3600

    let redis: RedisClient
    let jobQueue: String
    let logger: Logger

    /// How often this message has been redelivered so far (1 for the first redelivery), or nil
    /// when it is not a redelivery or Redis could not count it.
    func count(_ delivery: AMQPDelivery) async -> Int? {
        guard delivery.redelivered else { return nil }
        // Quorum queues count for us (RabbitMQ 3.10+: failed deliveries so far), Redis or not.
        if let brokerCount = Self.brokerDeliveryCount(delivery.properties.headers) { return brokerCount }
        do {
            guard case .integer(let count) = try await step(key(delivery), by: 1) else { return nil }
            return Int(count)
        } catch {
            logger.debug("cannot count a redelivery in Redis", metadata: [LogKeys.error: "\(error)"])
            return nil
        }
    }

    /// A delivery handed back unread for lack of memory (`BodyBytesInFlight`) comes back flagged
    /// redelivered, though no worker crashed on it: its count steps back now, so the next
    /// delivery's step cancels out. (A quorum queue's own `x-delivery-count` still counts it.)
    func forgive(_ delivery: AMQPDelivery) async {
        let key = key(delivery)
        do {
            _ = try await step(key, by: -1)
        } catch {
            logger.debug("cannot step back a redelivery count in Redis", metadata: [LogKeys.error: "\(error)"])
        }
    }

    /// Adds `delta` to the count and makes sure it expires, in one atomic step: as two commands, a
    /// crash between them left a count that never expired. The first step of a count starts its
    /// hour; a count found without expiry (left so by a worker before this) gets one.
    static let stepScript = """
        local count = redis.call('INCRBY', KEYS[1], ARGV[1])
        if count == tonumber(ARGV[1]) or redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
        return count
        """

    func step(_ key: String, by delta: Int) async throws(RedisError) -> RedisReply {
        try await redis.command(["EVAL", Self.stepScript, "1", key, String(delta), String(Self.expirySeconds)])
    }

    /// Names a message by its queue, message id, size and the start of its body: what a delivery
    /// carries whether its body was read whole or not (`AMQPDelivery.keptBodyPrefix`).
    func key(_ delivery: AMQPDelivery) -> String {
        Self.key(jobQueue: jobQueue, messageID: delivery.properties.messageID, bodySize: delivery.bodySize, body: delivery.body)
    }

    static func key(jobQueue: String, messageID: String?, bodySize: Int, body: [UInt8]) -> String {
        "pushworker:redelivered:" + Digest.hex([
            Array(jobQueue.utf8), Array((messageID ?? "").utf8), Array(String(bodySize).utf8),
            Array(body.prefix(AMQPDelivery.keptBodyPrefix)),
        ])
    }

    /// The `x-delivery-count` header a quorum queue adds to a message it delivers again.
    static func brokerDeliveryCount(_ headers: [String: AMQPFieldValue]) -> Int? {
        switch headers["x-delivery-count"] {
        case .int(let count)? where count > 0: Int(clamping: count)
        default: nil
        }
    }
}
