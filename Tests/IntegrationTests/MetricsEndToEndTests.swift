import Foundation
import Logging
import Sandbox
import ServiceLifecycle
import StatusEndpoint
import Testing
import Worker

/// `/metrics` scraped during a real run (RabbitMQ, Redis, the sandbox over HTTP/2): its counters
/// agree with the events the worker published and with what the sandbox recorded.
@Suite(.serialized) struct MetricsEndToEndTests {
    @Test func countersAgreeWithTheEventsAndTheSandbox() async throws {
        let invalid = PipelineFixture.token(410), flaky = PipelineFixture.token(503)
        try await PipelineFixture.with(sandbox: {
            $0.rules = [SandboxRule(token: invalid, status: 410, reason: "Unregistered"),
                        SandboxRule(token: flaky, status: 503, reason: "ServiceUnavailable", times: 1)]
        }) { fixture in
            let export = PrometheusExport()
            try fixture.startWorker(fixture.workerConfiguration(), metrics: WorkerMetrics(factory: export.factory))
            let worker = try #require(fixture.worker)
            let (ports, portInput) = AsyncStream.makeStream(of: Int.self)
            let server = StatusServer(host: "127.0.0.1", port: 0, status: worker.status, logger: fixture.logger,
                                      listening: { portInput.yield($0) },
                                      metrics: { worker.sampleMetrics(); return export.exposition() })
            let group = ServiceGroup(services: [server], logger: fixture.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())

                let tokens = [PipelineFixture.token(1), PipelineFixture.token(2), invalid, flaky]
                try await fixture.publish(#"{"id":"m-1","tokens":["\#(tokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"x"}}}"#)
                try await fixture.publish("not json", messageID: "m-bad")
                let events = try await fixture.events {
                    $0.filter { $0.routingKey == "job.completed" }.count == 2 && $0.contains { $0.routingKey == "job.rejected" }
                }
                let completions = events.filter { $0.routingKey == "job.completed" }
                let sentByEvents = completions.reduce(0) { $0 + ($1.int("sent") ?? 0) }
                let received = fixture.sandbox.received()

                let scraped = try LoopbackHTTP.get(port: port, path: "/metrics")
                #expect(scraped.status == 200)
                let metrics = Self.samples(scraped.body)
                func value(_ key: String) -> Double { metrics[key] ?? -1 }
                let app = #"app="default",platform="apns""#
                #expect(value(#"pushworker_notifications_total{\#(app),outcome="sent"}"#) == Double(sentByEvents))
                let acceptedCount = received.filter { $0.status == 200 }.count
                #expect(value(#"pushworker_notifications_total{\#(app),outcome="sent"}"#) == Double(acceptedCount))
                let invalidCount = events.filter { $0.routingKey == "token.invalid" }.count
                #expect(value(#"pushworker_notifications_total{\#(app),outcome="invalid"}"#) == Double(invalidCount))
                #expect(value(#"pushworker_notifications_total{\#(app),outcome="retried"}"#) == 1)
                #expect(value(#"pushworker_notification_failures_total{\#(app),reason="Unregistered"}"#) == 1)
                #expect(value(#"pushworker_retries_total{tier="300ms"}"#) == 1)
                // The job, its retry and the malformed one; each acked, the malformed one rejected.
                #expect(value("pushworker_jobs_consumed_total") == 3)
                #expect(value("pushworker_jobs_acked_total") == 3)
                #expect(value("pushworker_jobs_rejected_total") == 1)
                #expect(value("pushworker_events_published_total") == Double(events.count))
                // One answer per request the sandbox saw, whatever its status.
                #expect(value("pushworker_delivery_to_answer_seconds_count") == Double(received.count))
                #expect(value(#"pushworker_platform_round_trip_seconds_count{app="default"}"#) == Double(received.count))
                #expect(value("pushworker_amqp_connected") == 1)
                #expect(value(#"pushworker_http2_connections{app="default"}"#) >= 1)
                #expect(value("pushworker_devices_in_flight") == 0)
                // Token auth: at least the first token was put in use.
                #expect(value(#"pushworker_provider_token_refreshes_total{app="default"}"#) >= 1)
                #expect(!scraped.body.contains(PipelineFixture.token(1)))

                #expect(try LoopbackHTTP.get(port: port, path: "/livez").status == 200)
                #expect(try LoopbackHTTP.get(port: port, path: "/readyz").status == 200)
                await group.triggerGracefulShutdown()
                tasks.cancelAll()
            }
        }
    }

    /// `name{labels} value` lines of the text format, by `name{labels}` (labels as written).
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}
