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
    private let timer: (any RecorderHandler)?

    init(timer: (any RecorderHandler)? = nil) {
        self.timer = timer
    }

    /// A device's answer: delivery → now here, and hand-over to the transport → now in `roundTrip`
    /// (one clock read for both).
    func recordAnswer(deliveredAt: ContinuousClock.Instant, sentAt: ContinuousClock.Instant, roundTrip: (any RecorderHandler)?) {
        let now = ContinuousClock.now
        roundTrip?.record(seconds: now - sentAt)
        let (seconds, attoseconds) = (now - deliveredAt).components
        timer?.record(Double(seconds) + Double(attoseconds) * 1e-18)
        // Negative only if the clock went back (it cannot); an hour caps it as the histogram does.
        let microseconds = seconds < 0 ? 0 : seconds >= 3600 ? 3_600_000_000 : UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
        histogram.withLockedValue { _ = $0.record(microseconds) }
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

/// The latency histograms are swift-metrics recorder handlers, called directly: `Recorder.record`
/// is generic over BinaryFloatingPoint, and unspecialized it spends its time in dynamic casts
/// (measured: docs/evidence/code-measurements.md#latency-histograms).
extension RecorderHandler {
    /// A duration as seconds, the unit of the worker's latency histograms.
    func record(seconds duration: Duration) {
        let (seconds, attoseconds) = duration.components
        record(Double(seconds) + Double(attoseconds) * 1e-18)
    }
}
