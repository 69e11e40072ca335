import Histogram
import NIOConcurrencyHelpers

/// Time from a job's delivery to each of its devices' APNs answers, in microseconds. Recorded on
/// the connection pool's I/O thread, so it is one short lock and a constant-time HDR insert.
public final class LatencyRecorder: Sendable {
    public struct Summary: Sendable, Hashable {
        public var count: UInt64
        public var p50Microseconds: UInt64
        public var p99Microseconds: UInt64
        public var maxMicroseconds: UInt64
    }

    private let histogram = NIOLockedValueBox(Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three))

    func record(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let micros = UInt64(max(0, elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
        histogram.withLockedValue { _ = $0.record(min(micros, 3_600_000_000)) }
    }

    public var summary: Summary {
        histogram.withLockedValue { histogram in
            Summary(count: histogram.totalCount,
                    p50Microseconds: histogram.valueAtPercentile(50),
                    p99Microseconds: histogram.valueAtPercentile(99),
                    maxMicroseconds: histogram.max)
        }
    }
}
