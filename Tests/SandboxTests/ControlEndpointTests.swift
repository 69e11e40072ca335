import Foundation
import Sandbox
import Testing

/// The `/_sandbox/…` control requests, driven with curl as another process would.
@Suite("Sandbox control endpoint")
struct ControlEndpointTests {
    func curl(_ harness: SandboxHarness, _ method: String, _ path: String, body: String? = nil, extraArguments: [String] = []) async throws -> String {
        var arguments = ["-s", "--http2", "--cacert", harness.sandbox.material.caCertificateFile, "-X", method] + extraArguments
        if let body { arguments += ["-d", body] }
        let result = try await ExternalTool.run("curl", arguments + ["\(harness.baseURL)\(path)"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    /// The status curl saw and the body.
    func control(_ harness: SandboxHarness, _ method: String, _ path: String, body: String) async throws -> (status: Int, body: String) {
        let output = try await curl(harness, method, path, body: body, extraArguments: ["-w", "\n%{http_code}"])
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// Issue 17: `{"latencyMs":9300000000000}` was taken, and the next request trapped (the latency
    /// overflows as nanoseconds) on an event loop, taking the sandbox down.
    @Test("out-of-range control values are refused naming the field, and the sandbox keeps answering", arguments: [
        ("/_sandbox/faults", #"{"latencyMs":9300000000000}"#, "latencyMs"),
        ("/_sandbox/faults", #"{"latencyMs":600001}"#, "latencyMs"),
        ("/_sandbox/faults", #"{"latencyMs":-1}"#, "latencyMs"),
        ("/_sandbox/faults", #"{"latencyMs":"60"}"#, "latencyMs"),
        ("/_sandbox/faults", #"{"goAwayEveryRequests":-1}"#, "goAwayEveryRequests"),
        ("/_sandbox/faults", #"{"resetEveryRequests":1e300}"#, "resetEveryRequests"),
        ("/_sandbox/faults", #"{"stallEveryRequests":true}"#, "stallEveryRequests"),
        ("/_sandbox/faults", #"{"stallEveryRequests":1000000001}"#, "stallEveryRequests"),
        ("/_sandbox/faults", #"{"latency":60}"#, "latency"),
        ("/_sandbox/rules", #"[{"status":410,"reason":"Unregistered"},{"status":0}]"#, "rules[1].status"),
        ("/_sandbox/rules", #"[{"status":9300000000000}]"#, "rules[0].status"),
        ("/_sandbox/rules", #"[{"status":100}]"#, "rules[0].status"),
        ("/_sandbox/rules", #"[{"status":410,"times":-1}]"#, "rules[0].times"),
    ])
    func outOfRangeControlValues(_ path: String, _ body: String, _ field: String) async throws {
        try await SandboxHarness.with { harness in
            let answer = try await control(harness, "PUT", path, body: body)
            #expect(answer.status == 400, "\(answer.body)")
            let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
            #expect(object?["field"] as? String == field)
            #expect((object?["error"] as? String)?.contains(field) == true, "\(answer.body)")

            // Still answering, and the refused request changed nothing.
            let started = ContinuousClock.now
            #expect(try await harness.post().status == 200)
            #expect(try await harness.post().status == 200)
            // A refused latency (600 s and more) was not applied: far below it even on a loaded machine.
            #expect(ContinuousClock.now - started < .seconds(60))
            #expect(try await curl(harness, "GET", "/_sandbox/stats").contains(#""requests":2"#))
        }
    }

    @Test func controlValuesAtTheirLimitsAreTaken() async throws {
        try await SandboxHarness.with { harness in
            let accepted: [(String, String)] = [
                ("/_sandbox/faults", #"{"latencyMs":0,"goAwayEveryRequests":1000000000,"resetEveryRequests":0,"stallEveryRequests":null}"#),
                ("/_sandbox/faults", #"{"latencyMs":600000}"#),
                ("/_sandbox/faults", "{}"),
                ("/_sandbox/rules", #"[{"status":200,"times":0},{"status":599,"times":1000000}]"#),
            ]
            for (path, body) in accepted {
                let answer = try await control(harness, "PUT", path, body: body)
                #expect(answer.status == 200, "\(body): \(answer.body)")
            }
            let response = try await harness.post()
            #expect(response.status == 599)
        }
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
            // The provider token and team each request was accepted with, for tests of token sharing.
            #expect(lines[1].contains(#""team":"\#(harness.material.teamID)""#) && lines[1].contains(#""provider_token":"ey"#))

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
