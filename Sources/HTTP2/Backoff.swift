/// Delay before the next connection attempt after failures, so a down server does not get a
/// connect storm: 100 ms doubling to 5 s, reset by a successful handshake.
struct Backoff {
    let initial: Duration
    let maximum: Duration
    private var current: Duration?

    init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
    }

    mutating func next() -> Duration {
        let delay = current ?? initial
        current = min(delay * 2, maximum)
        return delay
    }

    mutating func reset() { current = nil }
}
