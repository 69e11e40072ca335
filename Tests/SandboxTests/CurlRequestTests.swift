import Foundation
import PushCore
import Sandbox
import Testing

/// Requests over verified TLS with curl (trusting only the generated CA) and a JWT minted here.
@Suite("Sandbox answers curl like APNs")
struct CurlRequestTests {
    @Test func acceptedRequestEchoesApnsID() async throws {
        try await SandboxHarness.with { harness in
            let id = "0E3F8A9B-1C2D-4E5F-8A9B-0C1D2E3F4A5B"
            let response = try await harness.post(headers: ["apns-id": id, "apns-priority": "5", "apns-collapse-id": "game-1"])
            #expect(response.curl.status == 0, "\(response.curl.stderr)")
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(response.headers["apns-id"] == id.lowercased())
            #expect(response.headers["apns-unique-id"]?.count == 36)

            let received = harness.sandbox.received()
            #expect(received.count == 1)
            let notification = try #require(received.first)
            #expect(notification.token == SandboxHarness.token)
            #expect(notification.topic == "com.example.app")
            #expect(notification.pushType == "alert")
            #expect(notification.priority == 5)
            #expect(notification.collapseID == "game-1")
            #expect(notification.apnsID == id.lowercased())
            #expect(notification.payload == Array(SandboxHarness.payload.utf8))
            #expect(notification.authentication == "token:SANDBOXKEY")
            #expect(notification.status == 200)
            #expect(harness.sandbox.statistics().accepted == 1)
        }
    }

    @Test func unregisteredRuleAnswers410WithTimestampThenBehavesNormally() async throws {
        try await SandboxHarness.with({
            $0.rules = [SandboxRule(token: SandboxHarness.token, reason: .unregistered, times: 1)]
        }) { harness in
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let first = try await harness.post()
            #expect(first.status == 410)
            #expect(first.reason == "Unregistered")
            let object = try JSONSerialization.jsonObject(with: Data(first.body.utf8)) as? [String: Any]
            let timestamp = try #require((object?["timestamp"] as? NSNumber)?.int64Value)
            #expect(timestamp >= before - 1000 && timestamp <= Int64(Date().timeIntervalSince1970 * 1000) + 1000)
            #expect(first.headers["apns-id"]?.count == 36)

            let second = try await harness.post()
            #expect(second.status == 200)
            #expect(harness.sandbox.received().map(\.status) == [410, 200])

            harness.sandbox.setRules([SandboxRule(tokenPrefix: "abab", reason: .tooManyRequests)])
            let third = try await harness.post()
            #expect(third.status == 429)
            #expect(third.reason == "TooManyRequests")
        }
    }

    @Test func rejectionsUseApnsStatusesAndReasons() async throws {
        try await SandboxHarness.with { harness in
            let old = Date().addingTimeInterval(-3700)
            let cases: [(String, () async throws -> SandboxHarness.Response, Int, String)] = [
                ("bad device token", { try await harness.post(token: "xyz123") }, 400, "BadDeviceToken"),
                ("short device token", { try await harness.post(token: "abcd") }, 400, "BadDeviceToken"),
                ("missing device token", { try await harness.post(path: "/3/device/") }, 400, "MissingDeviceToken"),
                ("bad path", { try await harness.post(path: "/3/devices/\(SandboxHarness.token)") }, 404, "BadPath"),
                ("method", { try await harness.post(body: nil, method: "GET") }, 405, "MethodNotAllowed"),
                ("wrong kid", { try await harness.post(headers: ["authorization": "bearer \(try harness.providerToken(keyID: "OTHERKEY12"))"]) }, 403, "InvalidProviderToken"),
                ("wrong team", { try await harness.post(headers: ["authorization": "bearer \(try harness.providerToken(teamID: "OTHERTEAM1"))"]) }, 403, "InvalidProviderToken"),
                ("foreign key", { try await harness.post(headers: ["authorization": "bearer \(try harness.providerToken(keyFile: harness.material.clientPrivateKeyFile))"]) }, 403, "InvalidProviderToken"),
                ("old iat", { try await harness.post(headers: ["authorization": "bearer \(try harness.providerToken(issuedAt: old))"]) }, 403, "ExpiredProviderToken"),
                ("no token", { try await harness.post(headers: ["authorization": nil]) }, 403, "MissingProviderToken"),
                ("missing topic", { try await harness.post(headers: ["apns-topic": nil]) }, 400, "MissingTopic"),
                ("bad priority", { try await harness.post(headers: ["apns-priority": "7"]) }, 400, "BadPriority"),
                ("bad expiration", { try await harness.post(headers: ["apns-expiration": "-1"]) }, 400, "BadExpirationDate"),
                ("bad apns-id", { try await harness.post(headers: ["apns-id": "not-a-uuid"]) }, 400, "BadMessageId"),
                ("long collapse id", { try await harness.post(headers: ["apns-collapse-id": String(repeating: "c", count: 65)]) }, 400, "BadCollapseId"),
                ("invalid push type", { try await harness.post(headers: ["apns-push-type": "sms"]) }, 400, "InvalidPushType"),
                ("voip without suffix", { try await harness.post(headers: ["apns-push-type": "voip"]) }, 400, "BadTopic"),
                // A payload that does not fit its push type, which Apple may drop without a word.
                ("background with an alert", {
                    try await harness.post(headers: ["apns-push-type": "background", "apns-priority": "5"], body: #"{"aps":{"content-available":1,"alert":"x"}}"#)
                }, 400, "InvalidPushType"),
                ("widgets without content-changed", {
                    try await harness.post(headers: ["apns-push-type": "widgets", "apns-topic": "com.example.app.push-type.widgets"], body: #"{"aps":{}}"#)
                }, 400, "InvalidPushType"),
                ("live activity without its event", {
                    try await harness.post(headers: ["apns-push-type": "liveactivity", "apns-topic": "com.example.app.push-type.liveactivity"],
                                           body: #"{"aps":{"timestamp":1700000000,"content-state":{}}}"#)
                }, 400, "InvalidPushType"),
                ("duplicate header", { try await harness.post(extraArguments: ["-H", "apns-priority: 10", "-H", "apns-priority: 5"]) }, 400, "DuplicateHeaders"),
                ("duplicate unknown apns header", { try await harness.post(extraArguments: ["-H", "apns-foo: 1", "-H", "apns-foo: 2"]) }, 400, "DuplicateHeaders"),
            ("empty payload", { try await harness.post(body: "") }, 400, "PayloadEmpty"),
                ("not JSON", { try await harness.post(body: "hello") }, 400, "BadPayload"),
                ("oversized payload", { try await harness.post(body: Self.payload(size: 4097)) }, 413, "PayloadTooLarge"),
                // More than the stream's 64 KiB window: the sandbox must give credit back to hear the end.
                ("payload beyond the stream window", { try await harness.post(body: Self.payload(size: 120_000)) }, 413, "PayloadTooLarge"),
                ("oversized voip payload", { try await harness.post(headers: ["apns-push-type": "voip", "apns-topic": "com.example.app.voip"], body: Self.payload(size: 5121)) }, 413, "PayloadTooLarge"),
            ]
            for (name, request, status, reason) in cases {
                let response = try await request()
                #expect(response.status == status, "\(name): \(response.body) \(response.curl.stderr)")
                #expect(response.reason == reason, "\(name)")
                #expect(response.headers["apns-id"] != nil, "\(name)")
            }

            let voip = try await harness.post(
                headers: ["apns-push-type": "voip", "apns-topic": "com.example.app.voip"], body: Self.payload(size: 5120)
            )
            #expect(voip.status == 200)
            let background = try await harness.post(headers: ["apns-push-type": "background", "apns-priority": "5"], body: #"{"aps":{"content-available":1}}"#)
            #expect(background.status == 200, "a background push as Apple describes it")
            let largest = try await harness.post(body: Self.payload(size: 4096))
            #expect(largest.status == 200)

            let statistics = harness.sandbox.statistics()
            #expect(statistics.rejected == cases.count)
            #expect(statistics.accepted == 3)
            #expect(harness.sandbox.received().count == cases.count + 3)
        }
    }

    @Test func allowedTopicsRestrictBundleIDs() async throws {
        try await SandboxHarness.with({ $0.allowedTopics = ["com.example.app"] }) { harness in
            #expect(try await harness.post().status == 200)
            let voip = try await harness.post(headers: ["apns-push-type": "voip", "apns-topic": "com.example.app.voip"])
            #expect(voip.status == 200)
            let other = try await harness.post(headers: ["apns-topic": "com.other.app"])
            #expect(other.status == 400)
            #expect(other.reason == "TopicDisallowed")
        }
    }

    @Test func certificateAuthenticationUsesTheCertificateTopic() async throws {
        try await SandboxHarness.with { harness in
            let identity = ["--cert", harness.material.clientCertificateFile, "--key", harness.material.clientPrivateKeyFile]

            let accepted = try await harness.post(headers: ["authorization": nil], extraArguments: identity)
            #expect(accepted.status == 200, "\(accepted.body) \(accepted.curl.stderr)")
            let implicitTopic = try await harness.post(headers: ["authorization": nil, "apns-topic": nil], extraArguments: identity)
            #expect(implicitTopic.status == 200)
            let foreign = try await harness.post(headers: ["authorization": nil, "apns-topic": "com.other.app"], extraArguments: identity)
            #expect(foreign.status == 400)
            #expect(foreign.reason == "TopicDisallowed")

            let received = harness.sandbox.received()
            #expect(received.map(\.authentication) == Array(repeating: "certificate:com.example.app", count: 3))
            #expect(received.map(\.topic) == ["com.example.app", "com.example.app", "com.other.app"])

            // The .p12 holds the same identity (AES-based, opens with the documented password).
            let p12 = try await ExternalTool.run("openssl", [
                "pkcs12", "-in", harness.material.clientPKCS12File, "-passin", "pass:sandbox", "-nokeys", "-clcerts",
            ])
            #expect(p12.status == 0, "\(p12.stderr)")
            #expect(p12.stdout.contains("UID") || p12.stdout.contains("0.9.2342.19200300.100.1.1"))
        }
    }

    @Test func changingTheTokenOnAConnectionTooOftenIsRefused() async throws {
        try await SandboxHarness.with { harness in
            let first = try harness.providerToken(issuedAt: Date().addingTimeInterval(-60))
            let second = try harness.providerToken()
            func request(_ token: String) -> [String] {
                ["-H", "authorization: bearer \(token)", "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
                 "--data-binary", SandboxHarness.payload, "-o", "/dev/null", "-w", "%{http_code}\\n", harness.url()]
            }
            // `--next` keeps curl on the same connection, as a provider would.
            let result = try await ExternalTool.run("curl", [
                "--http2", "-sS", "--cacert", harness.material.caCertificateFile, "--max-time", "20",
            ] + request(first) + ["--next", "--http2", "-sS", "--cacert", harness.material.caCertificateFile] + request(first)
                + ["--next", "--http2", "-sS", "--cacert", harness.material.caCertificateFile] + request(second))
            #expect(result.stdout.split(separator: "\n") == ["200", "200", "429"], "\(result.stderr)")
            #expect(harness.sandbox.received().last?.reason == "TooManyProviderTokenUpdates")
            #expect(harness.sandbox.statistics().connectionsAccepted == 1)
        }
    }

    @Test func restartKeepsTheGeneratedIdentity() async throws {
        let harness = try await SandboxHarness.start()
        let material = harness.material
        let ca = try String(contentsOfFile: material.caCertificateFile, encoding: .utf8)
        let tokenKey = try String(contentsOfFile: material.tokenKeyFile, encoding: .utf8)
        #expect(tokenKey.contains("BEGIN PRIVATE KEY"))
        #expect(material.tokenKeyID.count == 10 && material.teamID.count == 10)
        await harness.sandbox.stop()

        var configuration = SandboxConfiguration()
        configuration.port = 0
        configuration.stateDirectory = harness.directory
        let restarted = APNsSandbox(configuration: configuration, logger: .init(label: "sandbox-test"))
        let port = try await restarted.start()
        do {
            #expect(try String(contentsOfFile: material.caCertificateFile, encoding: .utf8) == ca)
            #expect(try String(contentsOfFile: material.tokenKeyFile, encoding: .utf8) == tokenKey)

            // A token minted before the restart still works, over TLS verified with the old ca.pem.
            let token = try harness.providerToken()
            let result = try await ExternalTool.run("curl", [
                "--http2", "-sS", "--cacert", material.caCertificateFile, "-o", "/dev/null", "-w", "%{http_code}",
                "-H", "authorization: bearer \(token)", "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
                "--data-binary", SandboxHarness.payload, "https://localhost:\(port)/3/device/\(SandboxHarness.token)",
            ])
            #expect(result.stdout == "200", "\(result.stderr)")
        } catch {
            await restarted.stop()
            throw error
        }
        await restarted.stop()
        try? FileManager.default.removeItem(atPath: harness.directory)
    }

    @Test func servesAConfiguredCertificate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-cert-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let openssl = try await ExternalTool.run("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", "\(directory)/own-key.pem", "-out", "\(directory)/own.pem",
        ])
        try #require(openssl.status == 0, "\(openssl.stderr)")
        try await SandboxHarness.with({
            $0.certificateFile = "\(directory)/own.pem"
            $0.privateKeyFile = "\(directory)/own-key.pem"
        }) { harness in
            let own = try await harness.post(extraArguments: ["--cacert", "\(directory)/own.pem"])
            #expect(own.status == 200, "\(own.curl.stderr)")
            // The sandbox's provider-token helper produces what the sandbox accepts.
            let helper = try await harness.post(headers: ["authorization": "bearer \(try harness.material.makeProviderToken())"],
                                                extraArguments: ["--cacert", "\(directory)/own.pem"])
            #expect(helper.status == 200)
        }
    }

    static func payload(size: Int) -> String {
        let prefix = #"{"aps":{"alert":""#
        let suffix = #""}}"#
        return prefix + String(repeating: "x", count: size - prefix.utf8.count - suffix.utf8.count) + suffix
    }
}
