/// A validated notification job: what to send, to whom, and how often it has been tried.
///
/// The fields live in one shared object, copied on write: a job travels through a dozen closures
/// and values (delivery round, requests, settlement), and copying nine fields each time cost a
/// retain and a release per field (~4% of a one-token job's CPU in `ops/bench --profile a`).
public struct PushJob: Sendable, Hashable {
    private final class Fields: Sendable {
        let id: String
        let app: String
        let tokens: [DeviceToken]
        let groups: [String]
        let expiration: Int
        let options: any PlatformOptions
        let payload: [UInt8]
        let attempts: Int
        let chunk: Int?

        init(id: String, app: String, tokens: [DeviceToken], groups: [String], expiration: Int,
             options: any PlatformOptions, payload: [UInt8], attempts: Int, chunk: Int?) {
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

        func with(id: String? = nil, app: String? = nil, tokens: [DeviceToken]? = nil, groups: [String]? = nil,
                  expiration: Int? = nil, options: (any PlatformOptions)? = nil, payload: [UInt8]? = nil,
                  attempts: Int? = nil, chunk: Int?? = nil) -> Fields {
            Fields(id: id ?? self.id, app: app ?? self.app, tokens: tokens ?? self.tokens, groups: groups ?? self.groups,
                   expiration: expiration ?? self.expiration, options: options ?? self.options,
                   payload: payload ?? self.payload, attempts: attempts ?? self.attempts, chunk: chunk ?? self.chunk)
        }
    }

    private var fields: Fields

    public var id: String {
        get { fields.id }
        set { fields = fields.with(id: newValue) }
    }
    public var app: String {
        get { fields.app }
        set { fields = fields.with(app: newValue) }
    }
    public var tokens: [DeviceToken] {
        get { fields.tokens }
        set { fields = fields.with(tokens: newValue) }
    }
    public var groups: [String] {
        get { fields.groups }
        set { fields = fields.with(groups: newValue) }
    }
    /// Absolute UNIX seconds; 0 means "one attempt, not stored by the platform".
    public var expiration: Int {
        get { fields.expiration }
        set { fields = fields.with(expiration: newValue) }
    }
    /// The platform's own fields (APNs: APNsCore's `APNsJobOptions`, read through `job.apns`).
    public var options: any PlatformOptions {
        get { fields.options }
        set { fields = fields.with(options: newValue) }
    }
    /// The body the platform receives, serialised once per job.
    public var payload: [UInt8] {
        get { fields.payload }
        set { fields = fields.with(payload: newValue) }
    }
    /// Tries already made for these devices (0 for a fresh job).
    public var attempts: Int {
        get { fields.attempts }
        set { fields = fields.with(attempts: newValue) }
    }
    /// Set on the jobs a large fan-out was split into.
    public var chunk: Int? {
        get { fields.chunk }
        set { fields = fields.with(chunk: .some(newValue)) }
    }

    public init(id: String, app: String = "default", tokens: [DeviceToken], groups: [String] = [], expiration: Int = 0,
                options: any PlatformOptions, payload: [UInt8], attempts: Int = 0, chunk: Int? = nil) {
        fields = Fields(id: id, app: app, tokens: tokens, groups: groups, expiration: expiration, options: options,
                        payload: payload, attempts: attempts, chunk: chunk)
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
        job.fields = fields.with(tokens: tokens, groups: [], attempts: attempts, chunk: .some(chunk))
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
