/// A validated notification job: what to send, to whom, and how often it has been tried.
///
/// The fields live in one shared object, copied on write: a job travels through a dozen closures
/// and values (delivery round, requests, settlement), and copying nine fields each time cost a
/// retain and a release per field (measured: docs/evidence/code-measurements.md#push-job-storage).
public struct PushJob: Sendable, Hashable {
    /// Every field, declared once; equality and hashing are synthesized from them.
    private struct Fields: Sendable, Hashable {
        var id: String
        var app: String
        var tokens: [DeviceToken]
        var groups: [String]
        var sourceGroups: [String]
        var bulk: Bool
        var expiration: Int
        var options: Options
        var payload: [UInt8]
        var attempts: Int
        var chunk: Int?
        var outageWaits: Int
    }

    /// The platform's options, compared and hashed through `PlatformOptions`.
    private struct Options: Sendable, Hashable {
        let value: any PlatformOptions
        static func == (lhs: Options, rhs: Options) -> Bool { lhs.value.isEqual(to: rhs.value) }
        func hash(into hasher: inout Hasher) { value.hash(into: &hasher) }
    }

    private final class Shared: Sendable, Hashable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
        static func == (lhs: Shared, rhs: Shared) -> Bool { lhs === rhs || lhs.fields == rhs.fields }
        func hash(into hasher: inout Hasher) { hasher.combine(fields) }
    }

    private var shared: Shared

    /// A change makes a new shared object: copies made before keep theirs.
    private mutating func update(_ change: (inout Fields) -> Void) {
        var fields = shared.fields
        change(&fields)
        shared = Shared(fields)
    }

    public var id: String {
        get { shared.fields.id }
        set { update { $0.id = newValue } }
    }
    public var app: String {
        get { shared.fields.app }
        set { update { $0.app = newValue } }
    }
    public var tokens: [DeviceToken] {
        get { shared.fields.tokens }
        set { update { $0.tokens = newValue } }
    }
    public var groups: [String] {
        get { shared.fields.groups }
        set { update { $0.groups = newValue } }
    }
    /// The groups a chunk or retry job's devices were expanded from (the worker sets it; it is not
    /// expanded again): where an app's `prune_invalid_tokens` removes an invalid token from.
    public var sourceGroups: [String] {
        get { shared.fields.sourceGroups }
        set { update { $0.sourceGroups = newValue } }
    }
    /// The groups this job's devices may have come from: its own, or those of the job it was
    /// derived from.
    public var prunableGroups: [String] { groups.isEmpty ? sourceGroups : groups }
    /// Waits in the bulk lane: the publisher marked it, or it is a chunk of a fan-out (and its
    /// retries stay bulk).
    public var bulk: Bool {
        get { shared.fields.bulk }
        set { update { $0.bulk = newValue } }
    }
    /// Absolute UNIX seconds; 0 means "one attempt, not stored by the platform".
    public var expiration: Int {
        get { shared.fields.expiration }
        set { update { $0.expiration = newValue } }
    }
    /// The platform's own fields (APNs: APNsCore's `APNsJobOptions`, read through `job.apns`).
    public var options: any PlatformOptions {
        get { shared.fields.options.value }
        set { update { $0.options = Options(value: newValue) } }
    }
    /// The body the platform receives, serialised once per job.
    public var payload: [UInt8] {
        get { shared.fields.payload }
        set { update { $0.payload = newValue } }
    }
    /// Tries already made for these devices (0 for a fresh job).
    public var attempts: Int {
        get { shared.fields.attempts }
        set { update { $0.attempts = newValue } }
    }
    /// Set on the jobs a large fan-out was split into.
    /// Times its devices waited out an outage of a service that had delivered before
    /// (`DeliveryOutcome.serviceDown`): they do not use attempts, so this bounds them instead.
    public var outageWaits: Int {
        get { shared.fields.outageWaits }
        set { update { $0.outageWaits = newValue } }
    }
    /// 20 waits along the default ladder (1 s, 5 s, 30 s, 2 min, then 10 min each) come to about
    /// 2.7 hours: a service down longer than that fails its devices as if it had never answered.
    public static let maximumOutageWaits = 20

    public var chunk: Int? {
        get { shared.fields.chunk }
        set { update { $0.chunk = newValue } }
    }

    public init(id: String, app: String = "default", tokens: [DeviceToken], groups: [String] = [], sourceGroups: [String] = [],
                bulk: Bool = false, expiration: Int = 0, options: any PlatformOptions, payload: [UInt8], attempts: Int = 0,
                chunk: Int? = nil, outageWaits: Int = 0) {
        shared = Shared(Fields(id: id, app: app, tokens: tokens, groups: groups, sourceGroups: sourceGroups, bulk: bulk, expiration: expiration,
                               options: Options(value: options), payload: payload, attempts: attempts, chunk: chunk,
                               outageWaits: outageWaits))
    }

    /// The same notification for other devices: used for chunks of a fan-out and for retries.
    public func derived(tokens: [DeviceToken], attempts: Int, chunk: Int?, outageWaits: Int? = nil) -> PushJob {
        var job = self
        let sourceGroups = prunableGroups
        job.update {
            $0.tokens = tokens
            $0.groups = []
            $0.sourceGroups = sourceGroups
            $0.attempts = attempts
            $0.chunk = chunk
            if let outageWaits { $0.outageWaits = outageWaits }
            // A fan-out's chunks are bulk; a retry keeps its job's lane.
            if chunk != nil { $0.bulk = true }
        }
        return job
    }

    /// The job as the JSON that `JobParser` reads back. Expiration is written absolute so a
    /// relative "+3600" keeps its original deadline through retries.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + payload.count + tokens.count * 68)
        writer.field("id", id)
        writer.field("app", app)
        // A broadcast's one "device" is its channel, which its options write as `channel`.
        if options.channel == nil { writer.field("tokens", strings: tokens.map(\.given)) }
        if !groups.isEmpty { writer.field("groups", strings: groups) }
        if !sourceGroups.isEmpty { writer.field("source_groups", strings: sourceGroups) }
        if bulk { writer.field("bulk", rawJSON: Array("true".utf8)) }
        options.write(into: &writer)
        writer.field("expiration", expiration)
        if attempts > 0 { writer.field("attempts", attempts) }
        if let chunk { writer.field("chunk", chunk) }
        if outageWaits > 0 { writer.field("outage_waits", outageWaits) }
        writer.field("payload", rawJSON: payload)
        return writer.finish()
    }
}
