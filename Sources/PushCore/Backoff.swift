/// Capped exponential backoff with jitter for reconnects (RabbitMQ, APNs): attempt n waits a
/// random time in [d/2, d] with d = min(upper, lower·2ⁿ), so many workers do not reconnect
/// in lockstep.
public struct Backoff: Sendable {
    public let range: ClosedRange<Duration>
    public private(set) var attempt = 0

    public init(range: ClosedRange<Duration>) {
        self.range = range
    }

    public mutating func next(jitter: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }) -> Duration {
        let lower = Self.seconds(range.lowerBound)
        let upper = Self.seconds(range.upperBound)
        let exponent = Double(min(attempt, 62))
        attempt += 1
        let capped = min(upper, lower * pow2(exponent))
        return .nanoseconds(Int64(capped * jitter(0.5...1.0) * 1e9))
    }

    public mutating func reset() {
        attempt = 0
    }

    private func pow2(_ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(exponent) { result *= 2 }
        return result
    }

    public static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
