/// What the worker tells applications on the `push.results` topic exchange (DESIGN.md "Events").
public enum PushEvent: Sendable, Hashable {
    /// `requestID`: the id the request carried (APNs' `apns-id`), nil when none was sent.
    case tokenInvalid(token: String, reason: String, status: Int, timestamp: Int?, requestID: String? = nil)
    case deliveryFailed(token: String, status: Int, reason: String, attempts: Int, requestID: String? = nil)
    /// `excerpt`: the start of the message, when the dead-letter copy could not keep it whole.
    case jobRejected(error: String, field: String?, excerpt: String? = nil)
    case jobCompleted(JobCounts)
    /// A group the job named has no members in Redis (the key does not exist, or the set is empty).
    case groupMissing(group: String, key: String)

    public var routingKey: String {
        switch self {
        case .tokenInvalid: "token.invalid"
        case .deliveryFailed: "delivery.failed"
        case .jobRejected: "job.rejected"
        case .jobCompleted: "job.completed"
        case .groupMissing: "group.missing"
        }
    }

    /// The event body: the event's own fields plus `job_id`, `app` and `time` (RFC 3339, UTC).
    public func body(jobID: String?, app: String?, time: UnixTime) -> [UInt8] {
        var writer = JSONWriter()
        writer.field("event", routingKey)
        writer.field("job_id", jobID)
        writer.field("app", app)
        writer.field("time", time: time)
        switch self {
        case let .tokenInvalid(token, reason, status, timestamp, requestID):
            writer.field("token", token)
            writer.field("reason", reason)
            writer.field("status", status)
            writer.field("timestamp", timestamp)
            if let requestID { writer.field("apns_id", requestID) }
        case let .deliveryFailed(token, status, reason, attempts, requestID):
            writer.field("token", token)
            writer.field("status", status)
            writer.field("reason", reason)
            writer.field("attempts", attempts)
            if let requestID { writer.field("apns_id", requestID) }
        case let .jobRejected(error, field, excerpt):
            writer.field("error", error)
            writer.field("field", field)
            if let excerpt { writer.field("excerpt", excerpt) }
        case let .groupMissing(group, key):
            writer.field("group", group)
            writer.field("key", key)
        case let .jobCompleted(counts):
            writer.field("chunk", counts.chunk)
            writer.field("devices", counts.devices)
            writer.field("sent", counts.sent)
            writer.field("failed", counts.failed)
            writer.field("invalid", counts.invalid)
            writer.field("retried", counts.retried)
            writer.field("chunks", counts.chunks)
            writer.field("attempt", counts.attempt)
            writer.field("duration_ms", counts.durationMilliseconds)
            if !counts.groupsMissing.isEmpty { writer.field("groups_missing", strings: counts.groupsMissing) }
            if let first = counts.firstRequestID, let last = counts.lastRequestID {
                writer.field("apns_id_first", first)
                writer.field("apns_id_last", last)
            }
        }
        return writer.finish()
    }
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

    public init() {}
}
