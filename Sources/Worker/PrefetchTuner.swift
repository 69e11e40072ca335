import NIOConcurrencyHelpers

/// Sizes the AMQP prefetch from the jobs as they arrive (`--prefetch auto`, the default): enough
/// jobs to fill the notifications-in-flight budget twice over, but no more job bodies than half of
/// `--max-bytes-in-flight` on average, at least 10. One-device jobs get a large prefetch, 8,000 with
/// the default budget, so the pipe stays full at any APNs round trip; 1,000-device chunk jobs a
/// small one (their devices wait in RabbitMQ, not in memory). The decisions are `PrefetchTuning`'s;
/// this holds it for the threads that deliver jobs.
final class PrefetchTuner: Sendable {
    private let tuning: NIOLockedValueBox<PrefetchTuning>

    init(initial: Int, maxInFlight: Int, maxBytesInFlight: Int) {
        self.tuning = NIOLockedValueBox(PrefetchTuning(initial: initial, maxInFlight: maxInFlight, maxBytesInFlight: maxBytesInFlight))
    }

    /// One job's size; returns a new prefetch when the tuning asks for one.
    func observe(devices: Int, bodyBytes: Int) -> UInt16? {
        tuning.withLockedValue { $0.observe(devices: devices, bodyBytes: bodyBytes, now: .now) }
    }
}
