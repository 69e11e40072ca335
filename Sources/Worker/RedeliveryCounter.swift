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
        let key = key(delivery)
        do {
            guard case .integer(let count) = try await redis.command(["INCR", key]) else { return nil }
            if count == 1 { _ = try await redis.command(["EXPIRE", key, String(Self.expirySeconds)]) }
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
            _ = try await redis.command(["DECR", key])
            _ = try await redis.command(["EXPIRE", key, String(Self.expirySeconds)])
        } catch {
            logger.debug("cannot step back a redelivery count in Redis", metadata: [LogKeys.error: "\(error)"])
        }
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
