/// At most `perSecond` requests started on one connection in any one second (a sliding window, so
/// no second ever sees more, unlike a token bucket, which lets two bursts meet at a boundary).
/// Remembers the start of each of the last `perSecond` requests: a few KB at thousands per second.
struct RequestRate: Equatable, Sendable {
    static let window: Duration = .seconds(1)

    let perSecond: Int
    /// Starts of the last `perSecond` requests, oldest at `oldest` once full.
    private var starts: [ContinuousClock.Instant] = []
    private var oldest = 0

    init(perSecond: Int) {
        self.perSecond = max(1, perSecond)
        starts.reserveCapacity(min(self.perSecond, 4096))
    }

    func allows(now: ContinuousClock.Instant) -> Bool {
        starts.count < perSecond || starts[oldest] + Self.window <= now
    }

    /// When the next request may start, while the window is full; nil when one may start now.
    func nextStart(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        allows(now: now) ? nil : starts[oldest] + Self.window
    }

    /// How many requests may start at `now`: what the window has not used yet, plus the starts that
    /// left it. The starts are in time order from `oldest`, so the ones that left are found by bisection.
    func remaining(now: ContinuousClock.Instant) -> Int {
        guard !starts.isEmpty else { return perSecond }
        var low = 0, high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if starts[(oldest + middle) % starts.count] + Self.window <= now { low = middle + 1 } else { high = middle }
        }
        return perSecond - starts.count + low
    }

    mutating func started(now: ContinuousClock.Instant) {
        guard starts.count == perSecond else {
            starts.append(now)
            return
        }
        starts[oldest] = now
        oldest = (oldest + 1) % perSecond
    }
}
