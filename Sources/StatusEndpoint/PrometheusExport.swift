import CoreMetrics
import Prometheus

/// The worker's metrics in Prometheus' text format, by swift-prometheus: `factory` goes to
/// `WorkerMetrics`, `exposition()` is what `GET /metrics` answers. The histograms' buckets are
/// chosen for push latencies: 1 ms to 60 s. The worker's timings are swift-metrics Recorders of
/// seconds (Prometheus histograms of Double): a Timer's Duration buckets cost more per record
/// (128-bit compares, an Int128 multiply; measured: docs/evidence/code-measurements.md#latency-histograms).
public struct PrometheusExport: Sendable {
    public let registry = PrometheusCollectorRegistry()
    public let factory: any MetricsFactory

    /// Seconds.
    public static let latencyBuckets: [Double] = [
        0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
    ]

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultValueHistogramBuckets = Self.latencyBuckets
        self.factory = factory
    }

    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
