/// A validated notification job: what to send, to whom, and how often it has been tried.
public struct PushJob: Sendable, Hashable {
    public var id: String
    public var app: String
    public var tokens: [DeviceToken]
    public var groups: [String]
    public var pushType: APNsPushType
    public var priority: Int
    /// Absolute UNIX seconds; 0 means "one attempt, not stored by APNs".
    public var expiration: Int
    public var collapseID: String?
    public var topic: String?
    /// The APNs body, serialised once per job.
    public var payload: [UInt8]
    /// Tries already made for these devices (0 for a fresh job).
    public var attempts: Int
    /// Set on the jobs a large fan-out was split into.
    public var chunk: Int?

    public init(id: String, app: String = "default", tokens: [DeviceToken], groups: [String] = [],
                pushType: APNsPushType = .alert, priority: Int = 10, expiration: Int = 0,
                collapseID: String? = nil, topic: String? = nil, payload: [UInt8], attempts: Int = 0, chunk: Int? = nil) {
        self.id = id
        self.app = app
        self.tokens = tokens
        self.groups = groups
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.topic = topic
        self.payload = payload
        self.attempts = attempts
        self.chunk = chunk
    }

    /// The same notification for other devices: used for chunks of a fan-out and for retries.
    public func derived(tokens: [DeviceToken], attempts: Int, chunk: Int?) -> PushJob {
        var job = self
        job.tokens = tokens
        job.groups = []
        job.attempts = attempts
        job.chunk = chunk
        return job
    }

    /// The job as the JSON that `JobParser` reads back. Expiration is written absolute so a
    /// relative "+3600" keeps its original deadline through retries.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + payload.count + tokens.count * 68)
        writer.field("id", id)
        writer.field("app", app)
        writer.field("tokens", strings: tokens.map(\.given))
        if !groups.isEmpty { writer.field("groups", strings: groups) }
        writer.field("push_type", pushType.rawValue)
        writer.field("priority", priority)
        writer.field("expiration", expiration)
        if let collapseID { writer.field("collapse_id", collapseID) }
        if let topic { writer.field("topic", topic) }
        if attempts > 0 { writer.field("attempts", attempts) }
        if let chunk { writer.field("chunk", chunk) }
        writer.field("payload", rawJSON: payload)
        return writer.finish()
    }
}
