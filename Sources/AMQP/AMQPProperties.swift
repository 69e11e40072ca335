/// basic.properties of a message. Only the fields the worker uses are exposed.
///
/// The strings and headers live in one shared object, replaced on write: a delivery's properties
/// are copied into every closure and command that carries the message, and copying seven
/// reference-counted fields each time was costly (measured:
/// docs/evidence/code-measurements.md#amqp-properties).
public struct AMQPProperties: Sendable, Hashable {
    /// The reference-counted fields, shared by every copy.
    private struct Strings: Sendable, Hashable {
        var contentType: String?
        var messageID: String?
        var correlationID: String?
        var type: String?
        var appID: String?
        var expiration: String?
        var headers: [String: AMQPFieldValue] = [:]
    }

    private final class Shared: Sendable, Hashable {
        let strings: Strings
        init(_ strings: Strings) { self.strings = strings }
        static func == (lhs: Shared, rhs: Shared) -> Bool { lhs === rhs || lhs.strings == rhs.strings }
        func hash(into hasher: inout Hasher) { hasher.combine(strings) }
        static let empty = Shared(Strings())
    }

    private var shared: Shared

    /// A change makes a new shared object: copies made before keep theirs.
    private mutating func update(_ change: (inout Strings) -> Void) {
        var strings = shared.strings
        change(&strings)
        shared = Shared(strings)
    }

    public var contentType: String? {
        get { shared.strings.contentType }
        set { update { $0.contentType = newValue } }
    }
    public var messageID: String? {
        get { shared.strings.messageID }
        set { update { $0.messageID = newValue } }
    }
    public var correlationID: String? {
        get { shared.strings.correlationID }
        set { update { $0.correlationID = newValue } }
    }
    public var type: String? {
        get { shared.strings.type }
        set { update { $0.type = newValue } }
    }
    public var appID: String? {
        get { shared.strings.appID }
        set { update { $0.appID = newValue } }
    }
    /// Seconds since the epoch (AMQP timestamps have one-second resolution).
    public var timestamp: UInt64?
    /// Per-message TTL in milliseconds, as a decimal string (that is what AMQP carries).
    public var expiration: String? {
        get { shared.strings.expiration }
        set { update { $0.expiration = newValue } }
    }
    public var headers: [String: AMQPFieldValue] {
        get { shared.strings.headers }
        set { update { $0.headers = newValue } }
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
        let strings = Strings(contentType: contentType, messageID: messageID, correlationID: correlationID, type: type,
                              appID: appID, expiration: expiration, headers: headers)
        shared = strings == Strings() ? .empty : Shared(strings)
        self.timestamp = timestamp
        self.persistent = persistent
    }
}
