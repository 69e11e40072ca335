/// What the worker can read besides the pool's statistics: FCM's answers that use up the project's
/// quota without delivering anything (Google counts client errors against it), and the throttle.
public struct FCMClientCounters: Sendable, Hashable {
    /// 4xx answers other than 429, since the client started.
    public var clientErrors = 0
    /// 429 QUOTA_EXCEEDED answers for the project (not a single device's limit).
    public var projectQuotaExceeded = 0
    /// 429 answers for one device's own limit.
    public var deviceQuotaExceeded = 0
    /// The throttle's window of requests in flight; nil when not throttled.
    public var throttleWindow: Int?

    public init() {}
}
