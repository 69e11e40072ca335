import Foundation
import Sandbox
import Testing

/// HTTP/2-level behaviour checked with nghttp2's own tools (nghttp, h2load).
@Suite("Sandbox HTTP/2 behaviour")
struct ProtocolTests {
    @Test func tokenConnectionsStartWithOneStreamThenGetTheConfiguredLimit() async throws {
        try await SandboxHarness.with { harness in
            let body = try harness.writeFile("body.json", SandboxHarness.payload)
            let result = try await ExternalTool.run("nghttp", [
                "-nv", "-d", body, "-H", "authorization: bearer \(try harness.providerToken())",
                "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", harness.url(),
            ])
            #expect(result.status == 0, "\(result.stderr)")
            // The MAX_CONCURRENT_STREAMS values of the SETTINGS frames nghttp received, in order.
            var received: [String] = []
            var inReceivedSettings = false
            for line in result.stdout.components(separatedBy: "\n") {
                if line.contains("] recv ") || line.contains("] send ") {
                    inReceivedSettings = line.contains("recv SETTINGS frame")
                } else if inReceivedSettings, let range = line.range(of: "SETTINGS_MAX_CONCURRENT_STREAMS(0x03):") {
                    received.append(String(line[range.upperBound...].dropLast()))
                }
            }
            #expect(received == ["1", "1000"], "\(result.stdout)")
            #expect(result.stdout.contains(":status: 200"))
        }
    }

    @Test func h2loadLoadIsRecordedCompletely() async throws {
        try await SandboxHarness.with { harness in
            let (summary, result) = try await harness.h2load(requests: 20000, clients: 2, streams: 100)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(summary.succeeded == 20000, "\(result.stdout)")
            #expect(summary.status2xx == 20000)
            #expect(harness.sandbox.received().count == 20000)
            let statistics = harness.sandbox.statistics()
            #expect(statistics.accepted == 20000)
            #expect(statistics.connectionsAccepted == 2)
            #expect(statistics.maxConcurrentStreamsSeen > 1 && statistics.maxConcurrentStreamsSeen <= 100)
            print("h2load against the sandbox (-n 20000 -c 2 -m 100): \(summary.requestsPerSecond) req/s")
        }
    }

    @Test func maxConcurrentStreamsOfOneIsHonoured() async throws {
        try await SandboxHarness.with({ $0.maxConcurrentStreams = 1 }) { harness in
            let (summary, result) = try await harness.h2load(requests: 300, clients: 1, streams: 10)
            #expect(summary.succeeded == 300, "\(result.stdout) \(result.stderr)")
            let statistics = harness.sandbox.statistics()
            #expect(statistics.maxConcurrentStreamsSeen == 1)
            #expect(statistics.streamLimitViolations == 0)
            #expect(statistics.accepted == 300)
        }
    }

    @Test func goAwayEveryTenRequests() async throws {
        try await SandboxHarness.with({ $0.faults.goAwayEveryRequests = 10 }) { harness in
            // curl moves to a new connection after GOAWAY, as an APNs client must.
            var arguments = ["--http2", "-sS", "--cacert", harness.material.caCertificateFile, "--max-time", "30"]
            let token = try harness.providerToken()
            for index in 0..<25 {
                if index > 0 { arguments += ["--next", "--http2", "-sS", "--cacert", harness.material.caCertificateFile] }
                arguments += [
                    "-H", "authorization: bearer \(token)", "-H", "apns-topic: com.example.app",
                    "--data-binary", SandboxHarness.payload, "-o", "/dev/null", "-w", "%{http_code}\\n", harness.url(),
                ]
            }
            let result = try await ExternalTool.run("curl", arguments)
            #expect(result.stdout.split(separator: "\n") == Array(repeating: "200", count: 25), "\(result.stderr)")
            let statistics = harness.sandbox.statistics()
            #expect(statistics.goAwaysSent == 2)
            #expect(statistics.connectionsAccepted == 3)
            #expect(Set(harness.sandbox.received().map(\.connectionID)).count == 3)

            // Under concurrency the GOAWAY's last stream id keeps the record exact.
            harness.sandbox.reset()
            let (summary, load) = try await harness.h2load(requests: 200, clients: 1, streams: 1)
            #expect(summary.succeeded == harness.sandbox.statistics().accepted, "\(load.stdout)")
            #expect(harness.sandbox.statistics().goAwaysSent >= 1)
            let nghttp = try await ExternalTool.run("nghttp", [
                "-nv", "-d", try harness.writeFile("body.json", SandboxHarness.payload),
                "-H", "authorization: bearer \(try harness.providerToken())", "-H", "apns-topic: com.example.app",
            ] + (10..<22).map { harness.url(token: String(repeating: "ab", count: 31) + "\($0)") })
            #expect(nghttp.stdout.contains("GOAWAY"), "\(nghttp.stdout)")
            #expect(nghttp.stdout.contains(#"opaque_data(21)=[{"reason":"Shutdown"}]"#), "\(nghttp.stdout)")
        }
    }

    @Test func stalledRequestMakesTheClientTimeOut() async throws {
        try await SandboxHarness.with({ $0.faults.stallEveryRequests = 2 }) { harness in
            let first = try await harness.post()
            #expect(first.status == 200)
            // Each curl run is a new connection, so every first request there is answered.
            let token = try harness.providerToken()
            let result = try await ExternalTool.run("curl", [
                "--http2", "-sS", "--cacert", harness.material.caCertificateFile, "--max-time", "2",
                "-H", "authorization: bearer \(token)", "-H", "apns-topic: com.example.app",
                "--data-binary", SandboxHarness.payload, "-o", "/dev/null", "-w", "%{http_code}\\n", harness.url(),
                "--next", "--http2", "-sS", "--cacert", harness.material.caCertificateFile, "--max-time", "2",
                "-H", "authorization: bearer \(token)", "-H", "apns-topic: com.example.app",
                "--data-binary", SandboxHarness.payload, "-o", "/dev/null", "-w", "%{http_code}\\n", harness.url(),
            ])
            #expect(result.status == 28, "curl timeout expected: \(result.stderr)")
            #expect(result.stdout.hasPrefix("200"))
            #expect(harness.sandbox.statistics().stalls == 1)
            #expect(harness.sandbox.received().count == 2)
        }
    }

    @Test func resetDropsTheConnectionUnanswered() async throws {
        try await SandboxHarness.with({ $0.faults.resetEveryRequests = 1 }) { harness in
            let response = try await harness.post(maxTime: 10)
            #expect(response.status == 0)
            #expect(response.curl.status != 0 && response.curl.status != 28, "\(response.curl.stderr)")
            #expect(harness.sandbox.statistics().resets == 1)
            #expect(harness.sandbox.received().isEmpty)
        }
    }

    @Test func latencyIsAddedBeforeTheAnswer() async throws {
        try await SandboxHarness.with({ $0.faults.latency = .milliseconds(50) }) { harness in
            // From TLS established to the end of the answer; loosely, no upper bound.
            let response = try await harness.post(extraArguments: ["-w", "\n%{time_appconnect} %{time_total}"])
            #expect(response.status == 200)
            let times = response.body.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            #expect(times.count == 2)
            if times.count == 2 { #expect(times[1] - times[0] >= 0.05, "\(times)") }
        }
    }
}
