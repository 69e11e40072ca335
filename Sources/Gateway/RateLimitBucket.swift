/// One token bucket: `rate` requests a second on average, `burst` at once (an API key's, a relay
/// client's or a relay app's). A pure value driven by the time it is given, so its decisions are
/// tested without a clock.
public struct RateLimitBucket: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        case allowed
        /// Refused; a token is back after this many whole seconds (for `Retry-After`, at least 1).
        case refused(retryAfterSeconds: Int)
    }

    public let rate: Int
    public let burst: Int
    /// Tokens, in millionths so that sub-second refills are not lost to rounding.
    private var microTokens: Int64
    private var last: Duration

    public init(rate: Int, burst: Int, now: Duration) {
        self.rate = max(1, rate)
        self.burst = max(1, burst)
        microTokens = Int64(self.burst) * 1_000_000
        last = now
    }

    public mutating func take(now: Duration) -> Decision {
        if now > last {
            microTokens = refilled(now: now)
            last = now
        }
        if microTokens >= 1_000_000 {
            microTokens -= 1_000_000
            return .allowed
        }
        let missing = 1_000_000 - microTokens
        let waitMicros = (missing + Int64(rate) - 1) / Int64(rate)
        return .refused(retryAfterSeconds: max(1, Int((waitMicros + 999_999) / 1_000_000)))
    }

    /// Whether the bucket has refilled to its burst by `now`: it then decides as a new one would,
    /// so a table of buckets may drop it and forget nothing.
    public func isFull(now: Duration) -> Bool {
        (now > last ? refilled(now: now) : microTokens) == Int64(burst) * 1_000_000
    }

    private func refilled(now: Duration) -> Int64 {
        let (seconds, attoseconds) = (now - last).components
        // Widened on purpose: a bucket left alone for years must not overflow its refill.
        let elapsedMicros = seconds.multipliedReportingOverflow(by: 1_000_000)
        let micros = elapsedMicros.overflow ? Int64.max : elapsedMicros.partialValue &+ attoseconds / 1_000_000_000_000
        let refill = micros.multipliedReportingOverflow(by: Int64(rate))
        let capacity = Int64(burst) * 1_000_000
        let total = microTokens.addingReportingOverflow(refill.partialValue)
        return refill.overflow || total.overflow ? capacity : min(capacity, total.partialValue)
    }
}
