import PushCore

/// What Pushworker remembers of one broadcast channel: APNs keeps only its id and storage policy,
/// so the label, the end of what it broadcasts (a match, a delivery) and the last broadcast live
/// here, in Redis, beside the groups.
public struct ChannelRecord: Sendable, Hashable {
    public let id: String
    /// APNs' `message-storage-policy`: 0 keeps nothing for offline devices, 1 the latest message.
    public var storagePolicy: Int
    /// When it was created, milliseconds since 1970.
    public var createdAt: Int64
    /// Free text for people (the game, the order); at most `maxLabelBytes`.
    public var label: String?
    /// When what it broadcasts ends, milliseconds since 1970: `channels prune --ended` deletes it after.
    public var endsAt: Int64?
    /// The last broadcast the worker sent on it, milliseconds since 1970.
    public var lastBroadcastAt: Int64?

    public static let maxLabelBytes = 200

    public init(id: String, storagePolicy: Int, createdAt: Int64, label: String? = nil, endsAt: Int64? = nil, lastBroadcastAt: Int64? = nil) {
        self.id = id
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
        self.label = label
        self.endsAt = endsAt
        self.lastBroadcastAt = lastBroadcastAt
    }

    /// The value stored under the channel's id.
    var stored: [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.field("storage_policy", storagePolicy)
        writer.field("created", Int(createdAt))
        if let label { writer.field("label", label) }
        if let endsAt { writer.field("ends_at", Int(endsAt)) }
        if let lastBroadcastAt { writer.field("last_broadcast", Int(lastBroadcastAt)) }
        return writer.finish()
    }

    /// Read back from Redis, where anyone with access may have written: nil for a value that is not
    /// what `stored` writes (the caller reports it; the channel itself is APNs').
    init?(id: String, stored bytes: [UInt8]) {
        guard bytes.count <= 4096, case let .object(members)? = try? JSONValue.parse(bytes),
              case let .int(policy)? = members["storage_policy"], policy == 0 || policy == 1,
              case let .int(created)? = members["created"] else { return nil }
        self.id = id
        storagePolicy = Int(policy)
        createdAt = created
        if case let .string(label)? = members["label"] { self.label = Self.bounded(label) }
        if case let .int(endsAt)? = members["ends_at"] { self.endsAt = endsAt }
        if case let .int(last)? = members["last_broadcast"] { lastBroadcastAt = last }
    }

    /// `label` cut to at most `maxLabelBytes`, on a character boundary.
    public static func bounded(_ label: String) -> String {
        guard label.utf8.count > maxLabelBytes else { return label }
        var cut = Substring(label)
        while cut.utf8.count > maxLabelBytes { cut = cut.dropLast() }
        return String(cut)
    }

    /// Whether what it broadcasts has ended by `now` (milliseconds since 1970).
    public func hasEnded(now: Int64) -> Bool {
        guard let endsAt else { return false }
        return endsAt <= now
    }
}
