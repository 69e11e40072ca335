import StatusEndpoint
import Testing
@testable import Worker

/// `pushworker_notification_failures_total{reason}` has at most 64 reasons per app. A Web Push
/// subscription names its own server, which writes its own reasons: 64 hostile words took every
/// slot, and a real `410` then counted as "other". Where reasons are not labels, the label is
/// the HTTP status, or the name of the worker's own reason.
@Suite struct FailureReasonLabelTests {
    static func labels(_ text: String, app: String) -> [String: Double] {
        MetricsEndToEndTests.samples(text).filter { $0.key.hasPrefix("pushworker_notification_failures_total{app=\"\(app)\"") }
    }

    @Test func aServersOwnWordsAreNotLabels() {
        let export = PrometheusExport()
        let metrics = WorkerMetrics(factory: export.factory)
        let web = metrics.appMetrics(app: "web", platform: "webpush", reasonsAreLabels: false)
        for index in 0..<100 { web.failure(reason: "hostile words \(index)", status: 403) }
        web.failure(reason: "Gone", status: 410)
        web.failure(reason: "EndpointNotAllowed: 10.0.0.7 is a private address (allow_private_endpoints is off)", status: 0)
        web.failure(reason: "EndpointNotAllowed: 192.168.1.1 is a private address (allow_private_endpoints is off)", status: 0)
        let webLabels = Self.labels(String(decoding: export.exposition(), as: UTF8.self), app: "web")
        #expect(webLabels == [
            #"pushworker_notification_failures_total{app="web",platform="webpush",reason="HTTP 403"}"#: 100,
            #"pushworker_notification_failures_total{app="web",platform="webpush",reason="HTTP 410"}"#: 1,
            #"pushworker_notification_failures_total{app="web",platform="webpush",reason="EndpointNotAllowed"}"#: 2,
        ], "\(webLabels)")
    }

    @Test func aKnownServicesReasonsAreLabelsUpToTheCap() {
        let export = PrometheusExport()
        let apns = WorkerMetrics(factory: export.factory).appMetrics(app: "ios", platform: "apns")
        apns.failure(reason: "BadDeviceToken", status: 400)
        for index in 0..<(AppMetrics.maxReasons + 5) { apns.failure(reason: "Reason\(index)", status: 400) }
        let labels = Self.labels(String(decoding: export.exposition(), as: UTF8.self), app: "ios")
        #expect(labels[#"pushworker_notification_failures_total{app="ios",platform="apns",reason="BadDeviceToken"}"#] == 1)
        #expect(labels.count == AppMetrics.maxReasons + 1, "64 reasons and other")
        #expect(labels[#"pushworker_notification_failures_total{app="ios",platform="apns",reason="other"}"#] == 6)
    }
}
