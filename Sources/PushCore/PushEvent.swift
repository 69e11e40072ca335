/// What the worker tells applications on the `push.results` topic exchange (README "Events").
public enum PushEvent: Sendable, Hashable {
    /// `requestID`: the message's id at the platform (APNs' `apns-id`, FCM's message `name`, a Web
    /// Push service's `Location`), written as `message_id`, nil when there is none; `isAPNsID`: it
    /// is also written as `apns_id`, the name APNs users look it up by.
    /// `prunedFrom`: the groups the token was removed from (the app's `prune_invalid_tokens`).
    case tokenInvalid(token: String, reason: String, status: Int, timestamp: Int?, requestID: String? = nil, isAPNsID: Bool = true,
                      prunedFrom: [String] = [])
    case deliveryFailed(token: String, status: Int, reason: String, attempts: Int, requestID: String? = nil, isAPNsID: Bool = true)
    /// `excerpt`: the start of the message, when the dead-letter copy could not keep it whole.
    case jobRejected(error: String, field: String?, excerpt: String? = nil)
    case jobCompleted(JobCounts)
    /// A group the job named has no members in Redis (the key does not exist, or the set is empty).
    case groupMissing(group: String, key: String)
    /// A broadcast job reached its channel: `requestID` is the platform's name for it (APNs'
    /// `apns-request-id`). A broadcast never yields a token event: it names no device.
    case broadcastSent(channel: String, requestID: String?)
    case broadcastFailed(channel: String, status: Int, reason: String, attempts: Int, requestID: String?)
    /// A channel operation's answer (`ChannelOperation`): made, deleted, or refused (`status` 0
    /// when APNs gave no answer).
    case channelCreated(channel: String, storagePolicy: Int, label: String?, endsAt: Int?)
    case channelDeleted(channel: String)
    case channelFailed(operation: String, channel: String?, status: Int, reason: String)

    public var routingKey: String {
        switch self {
        case .tokenInvalid: "token.invalid"
        case .deliveryFailed: "delivery.failed"
        case .jobRejected: "job.rejected"
        case .jobCompleted: "job.completed"
        case .groupMissing: "group.missing"
        case .broadcastSent: "broadcast.sent"
        case .broadcastFailed: "broadcast.failed"
        case .channelCreated: "channel.created"
        case .channelDeleted: "channel.deleted"
        case .channelFailed: "channel.failed"
        }
    }

    /// The event body: the event's own fields plus `job_id`, `app` and `time` (RFC 3339, UTC).
    public func body(jobID: String?, app: String?, time: UnixTime) -> [UInt8] {
        typealias Names = EventFieldNames
        var writer = JSONWriter(capacity: 512)
        writer.field(Names.event, formatted: routingKey)
        writer.field(Names.jobID, jobID)
        writer.field(Names.app, app)
        writer.field(Names.time, time: time)
        switch self {
        case let .tokenInvalid(token, reason, status, timestamp, requestID, isAPNsID, prunedFrom):
            writer.field("token", token)
            writer.field("reason", reason)
            writer.field("status", status)
            writer.field("timestamp", timestamp)
            Self.writeRequestID(requestID, isAPNsID: isAPNsID, into: &writer)
            if !prunedFrom.isEmpty { writer.field("removed_from_groups", strings: prunedFrom) }
        case let .deliveryFailed(token, status, reason, attempts, requestID, isAPNsID):
            writer.field("token", token)
            writer.field("status", status)
            writer.field("reason", reason)
            writer.field("attempts", attempts)
            Self.writeRequestID(requestID, isAPNsID: isAPNsID, into: &writer)
        case let .jobRejected(error, field, excerpt):
            writer.field("error", error)
            writer.field("field", field)
            if let excerpt { writer.field("excerpt", excerpt) }
        case let .groupMissing(group, key):
            writer.field("group", group)
            writer.field("key", key)
        case let .broadcastSent(channel, requestID):
            writer.field("channel", channel)
            writer.field("apns_request_id", requestID)
        case let .broadcastFailed(channel, status, reason, attempts, requestID):
            writer.field("channel", channel)
            writer.field("status", status)
            writer.field("reason", reason)
            writer.field("attempts", attempts)
            writer.field("apns_request_id", requestID)
        case let .channelCreated(channel, storagePolicy, label, endsAt):
            writer.field("channel", channel)
            writer.field("storage_policy", storagePolicy)
            if let label { writer.field("label", label) }
            if let endsAt { writer.field("ends_at", endsAt) }
        case let .channelDeleted(channel):
            writer.field("channel", channel)
        case let .channelFailed(operation, channel, status, reason):
            writer.field("operation", operation)
            writer.field("channel", channel)
            writer.field("status", status)
            writer.field("reason", reason)
        case let .jobCompleted(counts):
            // One per job: names with their punctuation (JSONWriter.Name).
            writer.field(Names.chunk, counts.chunk)
            writer.field(Names.devices, counts.devices)
            writer.field(Names.sent, counts.sent)
            writer.field(Names.failed, counts.failed)
            writer.field(Names.invalid, counts.invalid)
            writer.field(Names.retried, counts.retried)
            writer.field(Names.chunks, counts.chunks)
            writer.field(Names.attempt, counts.attempt)
            writer.field(Names.durationMilliseconds, counts.durationMilliseconds)
            if !counts.groupsMissing.isEmpty { writer.field("groups_missing", strings: counts.groupsMissing) }
            if counts.ttlShortened > 0, let shortest = counts.shortestTTL {
                writer.field("ttl_shortened", counts.ttlShortened)
                writer.field("shortest_ttl", shortest)
            }
            if let first = counts.firstRequestID, let last = counts.lastRequestID {
                writer.field(Names.firstRequestID, first)
                writer.field(Names.lastRequestID, last)
            }
        }
        return writer.finish()
    }

    private static func writeRequestID(_ requestID: String?, isAPNsID: Bool, into writer: inout JSONWriter) {
        guard let requestID else { return }
        if isAPNsID { writer.field("apns_id", requestID) }
        writer.field("message_id", requestID)
    }
}

/// The member names of what every event has and of job.completed, with their punctuation.
private enum EventFieldNames {
    static let event = JSONWriter.Name(quoted: "\"event\":")
    static let jobID = JSONWriter.Name(quoted: "\"job_id\":")
    static let app = JSONWriter.Name(quoted: "\"app\":")
    static let time = JSONWriter.Name(quoted: "\"time\":")
    static let chunk = JSONWriter.Name(quoted: "\"chunk\":")
    static let devices = JSONWriter.Name(quoted: "\"devices\":")
    static let sent = JSONWriter.Name(quoted: "\"sent\":")
    static let failed = JSONWriter.Name(quoted: "\"failed\":")
    static let invalid = JSONWriter.Name(quoted: "\"invalid\":")
    static let retried = JSONWriter.Name(quoted: "\"retried\":")
    static let chunks = JSONWriter.Name(quoted: "\"chunks\":")
    static let attempt = JSONWriter.Name(quoted: "\"attempt\":")
    static let durationMilliseconds = JSONWriter.Name(quoted: "\"duration_ms\":")
    static let firstRequestID = JSONWriter.Name(quoted: "\"apns_id_first\":")
    static let lastRequestID = JSONWriter.Name(quoted: "\"apns_id_last\":")
}

/// The `job.completed` tally for one job or chunk.
public struct JobCounts: Sendable, Hashable {
    public var devices = 0
    public var sent = 0
    public var failed = 0
    public var invalid = 0
    public var retried = 0
    /// Chunk jobs this job was split into (they report their own completion).
    public var chunks = 0
    public var chunk: Int?
    public var attempt = 1
    public var durationMilliseconds = 0
    /// Groups the job named that had no members (written only when there are some).
    public var groupsMissing: [String] = []
    /// The ids of this attempt's requests, in the order of the job's devices (written when sent).
    public var firstRequestID: String?
    public var lastRequestID: String?
    /// Devices whose message the platform accepted but keeps for less than the job asked (a Web
    /// Push service that shortened the `TTL`), and the shortest it keeps one, in seconds: a
    /// message not delivered by then is dropped by the service. Written only when there are some.
    public var ttlShortened = 0
    public var shortestTTL: Int?

    public init() {}

    /// Counts an accepted message kept for `grantedTTL` seconds, less than asked.
    public mutating func shortenedTTL(_ grantedTTL: Int) {
        ttlShortened += 1
        shortestTTL = min(shortestTTL ?? grantedTTL, grantedTTL)
    }
}
