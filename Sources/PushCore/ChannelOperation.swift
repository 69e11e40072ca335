/// A job that manages a broadcast channel instead of sending (`"channel_op": "create"` or
/// `"delete"`), so that an app's backend can open a channel for a game without shell access: the
/// worker carries it out with the app's credentials and answers with an event (`channel.created`,
/// `channel.deleted`, `channel.failed`). The job parser refuses `channel_op` as a push job's field
/// (`field == "channel_op"`); the worker then reads the message as this.
public struct ChannelOperation: Sendable, Hashable {
    public static let field = "channel_op"
    static let fields: Set<String> = ["id", "app", "channel_op", "channel", "storage_policy", "label", "ends_at"]
    public static let maxLabelBytes = 200

    public enum Kind: Sendable, Hashable {
        /// `storage_policy` 0 (nothing kept for offline devices) or 1 (the latest message).
        case create(storagePolicy: Int, label: String?, endsAt: Int?)
        case delete(channel: String)
    }

    public let id: String
    public let app: String
    public let kind: Kind

    /// "create" or "delete", for events and logs.
    public var name: String {
        switch kind {
        case .create: "create"
        case .delete: "delete"
        }
    }

    /// Reads and checks the message; `isChannelID` is the platform's rule for a channel id.
    public init(_ body: [UInt8], messageID: String?, makeID: () -> String, isChannelID: (String) -> Bool) throws(JobRejection) {
        let value: JSONValue
        do { value = try JSONValue.parse(body) } catch {
            throw JobRejection(field: nil, "the message is not valid JSON (\(error.problem) at byte \(error.offset))")
        }
        guard case let .object(members) = value else { throw JobRejection(field: nil, "the message must be a JSON object, got \(value.typeName)") }
        if let unknown = members.keys.filter({ !Self.fields.contains($0) && !$0.hasPrefix("x-") }).min() {
            throw JobRejection(field: JobParser.shown(unknown, maxBytes: 64),
                               "unknown field of a channel operation (known: \(Self.fields.sorted().joined(separator: ", ")))")
        }
        func string(_ key: String, maxBytes: Int) throws(JobRejection) -> String? {
            guard let value = members[key], value != .null else { return nil }
            guard case let .string(text) = value else { throw JobRejection(field: key, "must be a string, got \(value.typeName)") }
            guard text.utf8.count <= maxBytes else { throw JobRejection(field: key, "is \(text.utf8.count) bytes; at most \(maxBytes) allowed") }
            try JobParser.rejectControlCharacters(in: text, field: key)
            return text
        }
        id = try string("id", maxBytes: JobParser.maxIDLength).flatMap { $0.isEmpty ? nil : $0 } ?? messageID.flatMap { $0.isEmpty ? nil : $0 } ?? makeID()
        app = try string("app", maxBytes: JobParser.maxAppLength) ?? "default"
        guard JobParser.isName(app) else {
            throw JobRejection(field: "app", "must be 1–\(JobParser.maxAppLength) characters of A–Z, a–z, 0–9, '.', '_' or '-'")
        }
        let channel = try string("channel", maxBytes: 256)
        if let channel, !isChannelID(channel) {
            throw JobRejection(field: "channel", "must be a channel id as channel.created named it (base64), got \(JobParser.rendered(.string(channel)))")
        }
        switch try string("channel_op", maxBytes: 16) {
        case "create":
            guard channel == nil else { throw JobRejection(field: "channel", "is made by the create: leave it out") }
            let policy = members["storage_policy"].flatMap { $0 == .null ? nil : $0 }
            let storagePolicy: Int
            if let policy {
                guard let number = policy.exactInteger, number == 0 || number == 1 else {
                    throw JobRejection(field: "storage_policy", "must be 0 (nothing kept for offline devices) or 1 (the latest message), got \(JobParser.rendered(policy))")
                }
                storagePolicy = number
            } else {
                storagePolicy = 0
            }
            var endsAt: Int?
            if let value = members["ends_at"], value != .null {
                guard let seconds = value.exactInteger, seconds > 0, seconds < 253_402_300_800 else {
                    throw JobRejection(field: "ends_at", "must be UNIX seconds, got \(JobParser.rendered(value))")
                }
                endsAt = seconds
            }
            kind = .create(storagePolicy: storagePolicy, label: try string("label", maxBytes: Self.maxLabelBytes), endsAt: endsAt)
        case "delete":
            guard let channel else { throw JobRejection(field: "channel", "is required: the channel to delete") }
            for key in ["storage_policy", "label", "ends_at"] where members[key] != nil && members[key] != .null {
                throw JobRejection(field: key, "belongs to a create, not a delete")
            }
            kind = .delete(channel: channel)
        case let other:
            throw JobRejection(field: "channel_op", "must be \"create\" or \"delete\", got \(other.map { JobParser.rendered(.string($0)) } ?? "nothing")")
        }
    }
}
