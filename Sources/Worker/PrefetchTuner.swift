import NIOConcurrencyHelpers

/// Sizes the AMQP prefetch from the jobs as they arrive (`--prefetch auto`, the default): enough
/// jobs to fill the notifications-in-flight budget twice over, but no more job bodies than half of
/// `--max-bytes-in-flight` on average, at least 10. One-device jobs get a large prefetch, 8,000 with
/// the default budget, so the pipe stays full at any APNs round trip (a cap of 1,000 held them to
/// 1,000 in flight: 6,900/s at a 100 ms round trip); 1,000-device chunk jobs a small one (their
/// devices wait in RabbitMQ, not in memory). A change of at least 2x restarts the consumer.
final class PrefetchTuner: Sendable {
    /// `basic.qos` counts in 16 bits.
    static let range: ClosedRange<Int> = 10...Int(UInt16.max)
    /// Jobs between two looks at the averages; a look comes sooner once the jobs seen name twice
    /// the budget's devices (8 chunk jobs of 1,000), so a fan-out's chunk jobs are not held a
    /// hundred at a time, with their parsed devices, while the first window fills: that kept the
    /// 1,000,000-device fan-out's peak RSS 5–10 MB higher (README "Memory allocator").
    static let window = 64

    private struct State {
        var jobs = 0
        var devices = 0
        var bytes = 0
        var current: Int
    }

    private let maxInFlight: Int
    private let maxBytesInFlight: Int
    private let state: NIOLockedValueBox<State>

    init(initial: Int, maxInFlight: Int, maxBytesInFlight: Int) {
        self.maxInFlight = maxInFlight
        self.maxBytesInFlight = maxBytesInFlight
        self.state = NIOLockedValueBox(State(current: initial))
    }

    /// One job's size; returns a new prefetch when the last window asks for one.
    func observe(devices: Int, bodyBytes: Int) -> UInt16? {
        state.withLockedValue { state in
            state.jobs += 1
            state.devices += max(devices, 1)
            state.bytes += max(bodyBytes, 1)
            guard state.jobs >= Self.window || state.devices >= 2 * maxInFlight else { return nil }
            let wanted = Self.prefetch(meanDevices: Double(state.devices) / Double(state.jobs),
                                       meanBytes: Double(state.bytes) / Double(state.jobs),
                                       maxInFlight: maxInFlight, maxBytesInFlight: maxBytesInFlight)
            state.jobs = 0
            state.devices = 0
            state.bytes = 0
            guard wanted >= state.current * 2 || wanted * 2 <= state.current else { return nil }
            state.current = wanted
            return UInt16(wanted)
        }
    }

    static func prefetch(meanDevices: Double, meanBytes: Double, maxInFlight: Int, maxBytesInFlight: Int) -> Int {
        let byDevices = 2 * Double(maxInFlight) / max(meanDevices, 1)
        let byBytes = Double(maxBytesInFlight) / 2 / max(meanBytes, 1)
        return min(max(Int(min(byDevices, byBytes)), range.lowerBound), range.upperBound)
    }
}
