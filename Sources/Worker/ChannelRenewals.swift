import NIOConcurrencyHelpers

/// When the publish channel may be renewed again: at most once per `interval`, whichever job asks.
final class ChannelRenewals: Sendable {
    private let interval: Duration
    private let last = NIOLockedValueBox<ContinuousClock.Instant?>(nil)

    init(interval: Duration) {
        self.interval = interval
    }

    /// True (and counted as the renewal) when none happened in the last `interval`.
    func mayRenew(now: ContinuousClock.Instant) -> Bool {
        last.withLockedValue { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
    }
}
