/// A validated notification job: what to send, to whom, and how often it has been tried.
public struct PushJob: Sendable, Hashable {
    public var id: String
    public var app: String
    public var tokens: [DeviceToken]
    public var groups: [String]
    /// Absolute UNIX seconds; 0 means "one attempt, not stored by the platform".
    public var expiration: Int
    /// The platform's own fields (APNs: APNsCore's `APNsJobOptions`, read through `job.apns`).
    public var options: any PlatformOptions
    /// The body the platform receives, serialised once per job.
    public var payload: [UInt8]
    /// Tries already made for these devices (0 for a fresh job).
    public var attempts: Int
    /// Set on the jobs a large fan-out was split into.
    public var chunk: Int?

    public init(id: String, app: String = "default", tokens: [DeviceToken], groups: [String] = [], expiration: Int = 0,
                options: any PlatformOptions, payload: [UInt8], attempts: Int = 0, chunk: Int? = nil) {
        self.id = id
        self.app = app
        self.tokens = tokens
        self.groups = groups
        self.expiration = expiration
        self.options = options
        self.payload = payload
        self.attempts = attempts
        self.chunk = chunk
    }

    public static func == (lhs: PushJob, rhs: PushJob) -> Bool {
        lhs.id == rhs.id && lhs.app == rhs.app && lhs.tokens == rhs.tokens && lhs.groups == rhs.groups
            && lhs.expiration == rhs.expiration && lhs.options.isEqual(to: rhs.options) && lhs.payload == rhs.payload
            && lhs.attempts == rhs.attempts && lhs.chunk == rhs.chunk
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(app)
        hasher.combine(tokens)
        hasher.combine(groups)
        hasher.combine(expiration)
        options.hash(into: &hasher)
        hasher.combine(payload)
        hasher.combine(attempts)
        hasher.combine(chunk)
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
        options.write(into: &writer)
        writer.field("expiration", expiration)
        if attempts > 0 { writer.field("attempts", attempts) }
        if let chunk { writer.field("chunk", chunk) }
        writer.field("payload", rawJSON: payload)
        return writer.finish()
    }
}
