/// basic.properties of a message. Only the fields the worker uses are exposed.
public struct AMQPProperties: Sendable, Hashable {
    public var contentType: String?
    public var messageID: String?
    public var correlationID: String?
    public var type: String?
    public var appID: String?
    /// Seconds since the epoch (AMQP timestamps have one-second resolution).
    public var timestamp: UInt64?
    /// Per-message TTL in milliseconds, as a decimal string (that is what AMQP carries).
    public var expiration: String?
    public var headers: [String: AMQPFieldValue]
    /// `true` → delivery_mode 2, so the message survives a broker restart in a durable queue.
    public var persistent: Bool

    public init(
        contentType: String? = nil,
        messageID: String? = nil,
        correlationID: String? = nil,
        type: String? = nil,
        appID: String? = nil,
        timestamp: UInt64? = nil,
        expiration: String? = nil,
        headers: [String: AMQPFieldValue] = [:],
        persistent: Bool = true
    ) {
        self.contentType = contentType
        self.messageID = messageID
        self.correlationID = correlationID
        self.type = type
        self.appID = appID
        self.timestamp = timestamp
        self.expiration = expiration
        self.headers = headers
        self.persistent = persistent
    }
}
