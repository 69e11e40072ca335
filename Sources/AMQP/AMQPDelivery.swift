/// Identifies a delivery for ack/nack. Delivery tags are only meaningful on the channel
/// (and so the connection) that produced them, hence the generation.
public struct AMQPDeliveryTag: Sendable, Hashable, CustomStringConvertible {
    /// Which connection (counted from 1 per client) delivered the message.
    public let connectionGeneration: UInt64
    public let value: UInt64

    public init(connectionGeneration: UInt64, value: UInt64) {
        self.connectionGeneration = connectionGeneration
        self.value = value
    }

    public var description: String { "\(connectionGeneration)/\(value)" }
}

/// A message received by a consumer or basic.get.
public struct AMQPDelivery: Sendable {
    public let tag: AMQPDeliveryTag
    public let body: [UInt8]
    public let properties: AMQPProperties
    public let exchange: String
    public let routingKey: String
    public let redelivered: Bool
    /// Set when the body was larger than the consumer's `maxBodyBytes` (or its room): its announced
    /// size. `body` then holds only the first bytes (up to `keptBodyPrefix`); the rest was never kept.
    public let discardedBodySize: Int?

    /// How much of a discarded body is kept: enough to name the job in a rejection.
    public static let keptBodyPrefix = 64 * 1024

    /// The body's announced size, read whole or not.
    public var bodySize: Int { discardedBodySize ?? body.count }

    public init(tag: AMQPDeliveryTag, body: [UInt8], properties: AMQPProperties, exchange: String, routingKey: String,
                redelivered: Bool, discardedBodySize: Int? = nil) {
        self.tag = tag
        self.body = body
        self.properties = properties
        self.exchange = exchange
        self.routingKey = routingKey
        self.redelivered = redelivered
        self.discardedBodySize = discardedBodySize
    }
}
