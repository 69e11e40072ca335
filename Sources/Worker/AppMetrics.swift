import CoreMetrics
import NIOConcurrencyHelpers
import PushCore
import PushTransport

/// One app's metrics (labels `app` and `platform`, both from the configuration file: bounded).
/// Made once per app when its transport is made, so a job's counts cost a few atomic adds and no
/// lookup by label.
final class AppMetrics: Sendable {
    let app: String
    let platform: String
    private let sent, failed, invalid, retried: Counter
    /// Request sent → the platform's answer, per device.
    let roundTrip: any RecorderHandler
    private let connections, streamCapacity, streamsInFlight: Gauge
    private let goAways: Counter
    private let tokenRefreshes: Counter
    private let renewalsSeen = NIOLockedValueBox(0)
    private let factory: any MetricsFactory
    /// `reason` → its counter, at most `maxReasons` (a server's reason text is not ours to bound).
    private let failureReasons = NIOLockedValueBox<[String: Counter]>([:])
    /// GOAWAYs counted so far (the transport's statistics give a running total).
    private let goAwaysSeen = NIOLockedValueBox(0)
    static let maxReasons = 64
    private let reasonsAreLabels: Bool

    init(app: String, platform: String, reasonsAreLabels: Bool = true, factory: any MetricsFactory) {
        self.app = app
        self.platform = platform
        self.reasonsAreLabels = reasonsAreLabels
        self.factory = factory
        let labels = [("app", app), ("platform", platform)]
        func outcome(_ name: String) -> Counter {
            Counter(label: "pushworker_notifications_total", dimensions: labels + [("outcome", name)], factory: factory)
        }
        sent = outcome("sent")
        failed = outcome("failed")
        invalid = outcome("invalid")
        retried = outcome("retried")
        roundTrip = factory.makeRecorder(label: "pushworker_platform_round_trip_seconds", dimensions: [("app", app)], aggregate: true)
        connections = Gauge(label: "pushworker_http2_connections", dimensions: [("app", app)], factory: factory)
        streamCapacity = Gauge(label: "pushworker_http2_stream_capacity", dimensions: [("app", app)], factory: factory)
        streamsInFlight = Gauge(label: "pushworker_http2_streams_in_flight", dimensions: [("app", app)], factory: factory)
        goAways = Counter(label: "pushworker_http2_goaways_total", dimensions: [("app", app)], factory: factory)
        tokenRefreshes = Counter(label: "pushworker_provider_token_refreshes_total", dimensions: [("app", app)], factory: factory)
    }

    func record(_ counts: JobCounts) {
        if counts.sent > 0 { sent.increment(by: counts.sent) }
        if counts.failed > 0 { failed.increment(by: counts.failed) }
        if counts.invalid > 0 { invalid.increment(by: counts.invalid) }
        if counts.retried > 0 { retried.increment(by: counts.retried) }
    }

    /// A device failed for good (`delivery.failed`) or was invalid (`token.invalid`), by reason.
    /// `status`: the platform's HTTP status (0 when the worker decided). Where the transport says
    /// reasons are not labels, the label is `HTTP <status>`, or the name the worker's own reason
    /// starts with: a hostile Web Push server's words filled every reason slot before.
    func failure(reason: String, status: Int) {
        let reason = reasonsAreLabels ? reason : Self.untrustedLabel(reason: reason, status: status)
        let counter = failureReasons.withLockedValue { counters -> Counter in
            let label = counters[reason] != nil || counters.count < Self.maxReasons ? reason : "other"
            if let counter = counters[label] { return counter }
            let counter = Counter(label: "pushworker_notification_failures_total",
                                  dimensions: [("app", app), ("platform", platform), ("reason", label)], factory: factory)
            counters[label] = counter
            return counter
        }
        counter.increment()
    }

    /// `HTTP 410` for a service's answer; for the worker's own (status 0, "EndpointNotAllowed: …"),
    /// its name.
    static func untrustedLabel(reason: String, status: Int) -> String {
        guard status == 0 else { return "HTTP \(status)" }
        return String(reason.prefix { $0 != ":" && $0 != " " }.prefix(40))
    }

    /// At scrape time: the connection pool as it is now.
    func sample(_ statistics: TransportStatistics, credentialRenewals: Int) {
        let newRenewals = renewalsSeen.withLockedValue { seen in
            defer { seen = max(seen, credentialRenewals) }
            return max(0, credentialRenewals - seen)
        }
        if newRenewals > 0 { tokenRefreshes.increment(by: newRenewals) }
        connections.record(statistics.openConnections)
        streamCapacity.record(statistics.streamCapacity)
        streamsInFlight.record(statistics.streamsInFlight)
        let newGoAways = goAwaysSeen.withLockedValue { seen in
            defer { seen = max(seen, statistics.goAwaysReceived) }
            return max(0, statistics.goAwaysReceived - seen)
        }
        if newGoAways > 0 { goAways.increment(by: newGoAways) }
    }
}
