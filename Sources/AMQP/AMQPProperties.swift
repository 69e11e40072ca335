/// basic.properties of a message. Only the fields the worker uses are exposed.
///
/// The strings and headers live in one shared object, replaced on write: a delivery's properties
/// are copied into every closure and command that carries the message, and copying seven
/// reference-counted fields each time cost ~2,000 instructions per one-token job
/// (`ops/count-instructions`, the AMQP and worker copies of deliveries, publish requests and events).
public struct AMQPProperties: Sendable, Hashable {
    private final class Fields: Sendable, Hashable {
        let contentType: String?
        let messageID: String?
        let correlationID: String?
        let type: String?
        let appID: String?
        let expiration: String?
        let headers: [String: AMQPFieldValue]

        init(contentType: String?, messageID: String?, correlationID: String?, type: String?, appID: String?,
             expiration: String?, headers: [String: AMQPFieldValue]) {
            self.contentType = contentType
            self.messageID = messageID
            self.correlationID = correlationID
            self.type = type
            self.appID = appID
            self.expiration = expiration
            self.headers = headers
        }

        func with(contentType: String?? = nil, messageID: String?? = nil, correlationID: String?? = nil,
                  type: String?? = nil, appID: String?? = nil, expiration: String?? = nil,
                  headers: [String: AMQPFieldValue]? = nil) -> Fields {
            Fields(contentType: contentType ?? self.contentType, messageID: messageID ?? self.messageID,
                   correlationID: correlationID ?? self.correlationID, type: type ?? self.type,
                   appID: appID ?? self.appID, expiration: expiration ?? self.expiration, headers: headers ?? self.headers)
        }

        static func == (lhs: Fields, rhs: Fields) -> Bool {
            lhs === rhs || (lhs.contentType == rhs.contentType && lhs.messageID == rhs.messageID
                && lhs.correlationID == rhs.correlationID && lhs.type == rhs.type && lhs.appID == rhs.appID
                && lhs.expiration == rhs.expiration && lhs.headers == rhs.headers)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(contentType)
            hasher.combine(messageID)
            hasher.combine(correlationID)
            hasher.combine(type)
            hasher.combine(appID)
            hasher.combine(expiration)
            hasher.combine(headers)
        }

        static let none = Fields(contentType: nil, messageID: nil, correlationID: nil, type: nil, appID: nil,
                                 expiration: nil, headers: [:])
    }

    private var fields: Fields

    public var contentType: String? {
        get { fields.contentType }
        set { fields = fields.with(contentType: .some(newValue)) }
    }
    public var messageID: String? {
        get { fields.messageID }
        set { fields = fields.with(messageID: .some(newValue)) }
    }
    public var correlationID: String? {
        get { fields.correlationID }
        set { fields = fields.with(correlationID: .some(newValue)) }
    }
    public var type: String? {
        get { fields.type }
        set { fields = fields.with(type: .some(newValue)) }
    }
    public var appID: String? {
        get { fields.appID }
        set { fields = fields.with(appID: .some(newValue)) }
    }
    /// Seconds since the epoch (AMQP timestamps have one-second resolution).
    public var timestamp: UInt64?
    /// Per-message TTL in milliseconds, as a decimal string (that is what AMQP carries).
    public var expiration: String? {
        get { fields.expiration }
        set { fields = fields.with(expiration: .some(newValue)) }
    }
    public var headers: [String: AMQPFieldValue] {
        get { fields.headers }
        set { fields = fields.with(headers: newValue) }
    }
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
        if contentType == nil, messageID == nil, correlationID == nil, type == nil, appID == nil, expiration == nil,
           headers.isEmpty {
            fields = .none
        } else {
            fields = Fields(contentType: contentType, messageID: messageID, correlationID: correlationID, type: type,
                            appID: appID, expiration: expiration, headers: headers)
        }
        self.timestamp = timestamp
        self.persistent = persistent
    }
}
