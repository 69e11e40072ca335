import CoreMetrics
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
    /// The same durations for the metrics (`pushworker_delivery_to_answer_seconds`).
    private let timer: Timer?

    init(timer: Timer? = nil) {
        self.timer = timer
    }

    /// A device's answer: delivery → now here, and hand-over to the transport → now in `roundTrip`
    /// (one clock read for both).
    func recordAnswer(deliveredAt: ContinuousClock.Instant, sentAt: ContinuousClock.Instant, roundTrip: Timer?) {
        let now = ContinuousClock.now
        roundTrip?.recordNanoseconds(Self.nanoseconds(now - sentAt))
        let nanoseconds = Self.nanoseconds(now - deliveredAt)
        timer?.recordNanoseconds(nanoseconds)
        histogram.withLockedValue { _ = $0.record(min(UInt64(nanoseconds / 1000), 3_600_000_000)) }
    }

    /// Never negative; saturates instead of trapping on a duration beyond Int64 nanoseconds (292 years).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
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
