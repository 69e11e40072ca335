import CoreMetrics
import Prometheus

/// The worker's metrics in Prometheus' text format, by swift-prometheus: `factory` goes to
/// `WorkerMetrics`, `exposition()` is what `GET /metrics` answers. The histograms' buckets are
/// chosen for push latencies: 1 ms to 60 s.
public struct PrometheusExport: Sendable {
    public let registry = PrometheusCollectorRegistry()
    public let factory: any MetricsFactory

    public static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        .seconds(10), .seconds(30), .seconds(60),
    ]

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.latencyBuckets
        self.factory = factory
    }

    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
