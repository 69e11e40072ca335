/// The client-side throttle Google asks FCM senders for (Firebase, "Best practices when sending FCM
/// messages at scale": slow down on 429s, then speed up gradually): a window of requests in flight,
/// halved on a project quota 429 (at most once per `cutInterval`, so one burst of 429s from one
/// window counts once) and grown by a quarter each `growthInterval` without one, until it reaches
/// the HTTP/2 capacity and the throttle lets go. Fewer requests in flight is a lower request rate.
/// A value its tests drive with their own clock.
struct FCMThrottle {
    typealias Instant = ContinuousClock.Instant

    static let minimumWindow = 1
    static let cutInterval: Duration = .seconds(1)
    static let growthInterval: Duration = .seconds(1)

    /// nil: not throttled.
    private(set) var window: Int?
    private var lastCut: Instant?
    private var lastGrowth: Instant?

    /// FCM answered QUOTA_EXCEEDED for the project; `capacity` is what the connections allow now.
    mutating func quotaExceeded(capacity: Int, now: Instant) {
        if let lastCut, now - lastCut < Self.cutInterval { return }
        let current = limit(capacity: capacity, now: now)
        window = max(Self.minimumWindow, current / 2)
        lastCut = now
        lastGrowth = now
    }

    /// The requests the app may have in flight now: `capacity`, or less while throttled.
    mutating func limit(capacity: Int, now: Instant) -> Int {
        guard var current = window, let since = lastGrowth else { return capacity }
        var grown = since
        while now - grown >= Self.growthInterval {
            grown += Self.growthInterval
            current += max(1, current / 4)
            if current >= capacity {
                window = nil
                lastGrowth = nil
                return capacity
            }
        }
        window = current
        lastGrowth = grown
        return min(current, capacity)
    }
}
