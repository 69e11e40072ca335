import Glibc

/// What is left of one command's time while a router re-discovers a master or follows a
/// redirect: every connect and send is bounded by it, and the waits between tries grow (50 ms,
/// doubling, at most 1 s) without going past it. Used on the client's serial queue, where a
/// blocking sleep keeps no other work waiting (that queue's commands would fail meanwhile anyway).
struct RetryBudget {
    let deadline: ContinuousClock.Instant
    private var nextWait: Duration = .milliseconds(50)

    init(deadline: ContinuousClock.Instant) {
        self.deadline = deadline
    }

    var remaining: Duration { max(.zero, deadline - .now) }
    var expired: Bool { ContinuousClock.now >= deadline }

    /// A step's timeout: the configured one, or less when less is left.
    func bound(_ configured: Duration) -> Duration { min(configured, remaining) }

    /// Waits before the next try; false (without waiting) when no time is left for one.
    mutating func backOff() -> Bool {
        let wait = min(nextWait, remaining)
        guard wait > .milliseconds(5) else { return false }
        let (seconds, attoseconds) = wait.components
        _ = usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        nextWait = min(nextWait * 2, .seconds(1))
        return !expired
    }
}
