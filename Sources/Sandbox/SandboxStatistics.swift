/// Counters since start (or the last `reset()`); they keep counting when the record drops old entries.
///
/// Counters are `Int` (64 bits): 292,000 years at a million requests a second before one overflows.
public struct SandboxStatistics: Sendable, Hashable {
    public var connectionsAccepted = 0
    /// Complete requests received, answered or not.
    public var requests = 0
    /// Answered 200.
    public var accepted = 0
    /// Answered with an error status.
    public var rejected = 0
    public var goAwaysSent = 0
    public var resets = 0
    public var stalls = 0
    /// The most request streams open at once on one connection, counted only once the client had
    /// acknowledged the sandbox's first SETTINGS (before that HTTP/2 lets it open as many as it likes).
    public var maxConcurrentStreamsSeen = 0
    /// Streams the HTTP/2 layer refused because they exceeded the acknowledged limit.
    public var streamLimitViolations = 0
    /// Wall-clock milliseconds since 1970 of the first and last request (0 before any): what a
    /// benchmark measures throughput between.
    public var firstRequestAtMilliseconds: Int64 = 0
    public var lastRequestAtMilliseconds: Int64 = 0

    public init() {}
}
