import Foundation
import Sandbox
import Testing

/// The `/_sandbox/…` control requests, driven with curl as another process would.
@Suite("Sandbox control endpoint")
struct ControlEndpointTests {
    func curl(_ harness: SandboxHarness, _ method: String, _ path: String, body: String? = nil) async throws -> String {
        var arguments = ["-s", "--http2", "--cacert", harness.sandbox.material.caCertificateFile, "-X", method]
        if let body { arguments += ["-d", body] }
        let result = try await ExternalTool.run("curl", arguments + ["\(harness.baseURL)\(path)"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test func rulesFaultsStatsReceivedAndReset() async throws {
        try await SandboxHarness.with { harness in
            #expect(try await curl(harness, "PUT", "/_sandbox/rules", body: #"[{"token":"\#(SandboxHarness.token)","status":410,"reason":"Unregistered","times":1}]"#) == "{}")
            #expect(try await harness.post().status == 410)
            #expect(try await harness.post().status == 200)

            let stats = try JSONSerialization.jsonObject(with: Data(try await curl(harness, "GET", "/_sandbox/stats").utf8)) as? [String: Any]
            #expect((stats?["requests"] as? NSNumber)?.intValue == 2)
            #expect((stats?["accepted"] as? NSNumber)?.intValue == 1)
            #expect((stats?["rejected"] as? NSNumber)?.intValue == 1)
            let first = try #require((stats?["first_request_at_ms"] as? NSNumber)?.int64Value)
            let last = try #require((stats?["last_request_at_ms"] as? NSNumber)?.int64Value)
            #expect(first > 1_700_000_000_000 && last >= first)

            let lines = try await curl(harness, "GET", "/_sandbox/received").split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines[0].contains(#""status":410"#) && lines[0].contains(#""reason":"Unregistered""#))
            #expect(lines[1].contains(SandboxHarness.token))

            #expect(try await curl(harness, "PUT", "/_sandbox/faults", body: #"{"latencyMs":60}"#) == "{}")
            let started = ContinuousClock.now
            #expect(try await harness.post().status == 200)
            #expect(ContinuousClock.now - started >= .milliseconds(60))

            #expect(try await curl(harness, "POST", "/_sandbox/reset") == "{}")
            #expect(harness.sandbox.received().isEmpty)
            #expect(try await curl(harness, "PUT", "/_sandbox/rules", body: "not json").contains("error"))
            #expect(try await curl(harness, "GET", "/_sandbox/nothing").contains("unknown control request"))
        }
    }
}
