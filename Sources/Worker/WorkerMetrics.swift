import CoreMetrics
import NIOConcurrencyHelpers
import PushCore

/// The worker's metrics, through swift-metrics: the executable hands in a Prometheus factory and
/// serves them at `/metrics` (README "Operating it" lists them). Every label value is bounded:
/// app and platform come from the configuration file, reasons are capped per app
/// (`AppMetrics.maxReasons`), retry tiers are the configured delays, pause causes a fixed set. A
/// device token is never a label. Counters on the job path are atomic adds on objects made once;
/// gauges are read when scraped (`sample`), so keeping them costs the job path nothing.
public final class WorkerMetrics: Sendable {
    let factory: any MetricsFactory
    let jobsConsumed, jobsAcked, jobsRejected, jobsHandedBack, jobsDeferred, chunkJobsPublished: Counter
    let eventsPublished, amqpReconnects: Counter
    /// A job's delivery → each device's answer.
    let deliveryToAnswer: any RecorderHandler
    /// A batch of events (and retry or held jobs) written → the broker's confirm of all of them.
    let eventConfirm: any RecorderHandler
    private let devicesInFlight, prefetch, amqpConnected, redisHealthy: Gauge
    private let paused: [ConsumptionState.PauseCause: Gauge]
    private let pauses: [ConsumptionState.PauseCause: Counter]
    private let retryTiers = NIOLockedValueBox<[String: Counter]>([:])

    /// Without a factory, swift-metrics' global one (a no-op until the process bootstraps one).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        func counter(_ name: String) -> Counter { Counter(label: name, dimensions: [], factory: factory) }
        func gauge(_ name: String) -> Gauge { Gauge(label: name, dimensions: [], factory: factory) }
        jobsConsumed = counter("pushworker_jobs_consumed_total")
        jobsAcked = counter("pushworker_jobs_acked_total")
        jobsRejected = counter("pushworker_jobs_rejected_total")
        jobsHandedBack = counter("pushworker_jobs_handed_back_total")
        jobsDeferred = counter("pushworker_jobs_deferred_total")
        chunkJobsPublished = counter("pushworker_chunk_jobs_published_total")
        eventsPublished = counter("pushworker_events_published_total")
        amqpReconnects = counter("pushworker_amqp_reconnects_total")
        deliveryToAnswer = factory.makeRecorder(label: "pushworker_delivery_to_answer_seconds", dimensions: [], aggregate: true)
        eventConfirm = factory.makeRecorder(label: "pushworker_event_confirm_seconds", dimensions: [], aggregate: true)
        devicesInFlight = gauge("pushworker_devices_in_flight")
        prefetch = gauge("pushworker_prefetch")
        amqpConnected = gauge("pushworker_amqp_connected")
        redisHealthy = gauge("pushworker_redis_healthy")
        var paused: [ConsumptionState.PauseCause: Gauge] = [:]
        var pauses: [ConsumptionState.PauseCause: Counter] = [:]
        for cause in ConsumptionState.PauseCause.allCases {
            paused[cause] = Gauge(label: "pushworker_paused", dimensions: [("cause", cause.rawValue)], factory: factory)
            pauses[cause] = Counter(label: "pushworker_pauses_total", dimensions: [("cause", cause.rawValue)], factory: factory)
        }
        self.paused = paused
        self.pauses = pauses
    }

    func appMetrics(app: String, platform: String, reasonsAreLabels: Bool = true) -> AppMetrics {
        AppMetrics(app: app, platform: platform, reasonsAreLabels: reasonsAreLabels, factory: factory)
    }

    /// A retry published to wait `delay` (the tier: one of the configured delays).
    func retryPublished(delay: Duration) {
        let tier = DurationText.format(delay)
        retryTiers.withLockedValue { tiers in
            if let counter = tiers[tier] { return counter }
            let counter = Counter(label: "pushworker_retries_total", dimensions: [("tier", tier)], factory: factory)
            tiers[tier] = counter
            return counter
        }.increment()
    }

    func pauseBegan(_ cause: ConsumptionState.PauseCause) {
        pauses[cause]?.increment()
    }

    /// The values read at scrape time.
    struct Sample {
        var devicesInFlight: Int
        var prefetch: Int
        var amqpConnected: Bool
        var redisHealthy: Bool
        var pausedFor: Set<ConsumptionState.PauseCause>
    }

    func record(_ sample: Sample) {
        devicesInFlight.record(sample.devicesInFlight)
        prefetch.record(sample.prefetch)
        amqpConnected.record(sample.amqpConnected ? 1 : 0)
        redisHealthy.record(sample.redisHealthy ? 1 : 0)
        for (cause, gauge) in paused { gauge.record(sample.pausedFor.contains(cause) ? 1 : 0) }
    }
}
