import NIOConcurrencyHelpers

/// The answer of a check that costs a round trip (Redis' PING for `/healthz`), reused for
/// `maxAge`: a probe hammered by anyone who reaches the gateway costs Redis one PING a second, not
/// one per request. Callers that arrive while a check runs run their own (rare, and bounded by them).
final class CachedCheck: Sendable {
    private struct Last {
        var at: ContinuousClock.Instant
        var problem: String?
    }

    private let maxAge: Duration
    private let last = NIOLockedValueBox<Last?>(nil)

    init(maxAge: Duration) {
        self.maxAge = maxAge
    }

    /// The problem `run` found (nil: fine), from the last run when it is younger than `maxAge`.
    func check(_ run: @Sendable () async -> String?) async -> String? {
        let now = ContinuousClock.now
        if let cached = last.withLockedValue({ $0 }), now - cached.at < maxAge { return cached.problem }
        let problem = await run()
        last.withLockedValue { $0 = Last(at: now, problem: problem) }
        return problem
    }
}
