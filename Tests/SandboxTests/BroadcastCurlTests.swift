import Foundation
import Sandbox
import Testing

/// Live Activity broadcasts and APNs' channel-management API, driven with curl (HTTP/2 over TLS
/// verified against the generated CA: a peer that is not our code) and h2load.
@Suite("Sandbox broadcasts and channel management")
struct BroadcastCurlTests {
    static func object(_ body: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
    }

    @Test func createReadListBroadcastDeleteThenTheChannelIsGone() async throws {
        try await SandboxHarness.withChannelManagement { harness, port in
            let created = try await harness.manage("POST", port: port, body: SandboxHarness.channelConfiguration(policy: 1))
            #expect(created.status == 201, "\(created.body) \(created.curl.stderr)")
            #expect(created.body.isEmpty)
            #expect(created.headers["apns-request-id"]?.count == 36)
            let channel = try #require(created.headers["apns-channel-id"])
            #expect(Data(base64Encoded: channel)?.count == 16, "\(channel)")
            #expect(harness.sandbox.channels(bundleID: SandboxHarness.bundleID) == [channel: 1])

            let read = try await harness.manage("GET", port: port, channel: channel)
            #expect(read.status == 200)
            let configuration = Self.object(read.body)
            #expect((configuration?["message-storage-policy"] as? NSNumber)?.intValue == 1, "\(read.body)")
            #expect(configuration?["push-type"] as? String == "LiveActivity")

            let listed = try await harness.manage("GET", port: port, endpoint: "all-channels")
            #expect(listed.status == 200)
            #expect(Self.object(listed.body)?["channels"] as? [String] == [channel], "\(listed.body)")

            let requestID = "0E3F8A9B-1C2D-4E5F-8A9B-0C1D2E3F4A5B"
            let expiration = Int(Date().timeIntervalSince1970) + 3600
            let sent = try await harness.broadcast(
                channel: channel, headers: ["apns-request-id": requestID, "apns-expiration": "\(expiration)", "apns-priority": "5"]
            )
            #expect(sent.status == 200, "\(sent.body) \(sent.curl.stderr)")
            #expect(sent.body.isEmpty)
            #expect(sent.headers["apns-request-id"] == requestID.lowercased())
            #expect(sent.headers["apns-unique-id"]?.count == 36)
            #expect(sent.headers["apns-id"] == nil, "broadcasts are answered with apns-request-id")

            let received = harness.sandbox.received()
            #expect(received.count == 1)
            let broadcast = try #require(received.first)
            #expect(broadcast.channelID == channel)
            #expect(broadcast.token.isEmpty)
            #expect(broadcast.topic == SandboxHarness.bundleID)
            #expect(broadcast.pushType == "liveactivity")
            #expect(broadcast.priority == 5)
            #expect(broadcast.expiration == expiration)
            #expect(broadcast.apnsID == requestID.lowercased())
            #expect(broadcast.payload == Array(SandboxHarness.liveActivityPayload.utf8))
            #expect(broadcast.authentication == "token:SANDBOXKEY")
            #expect(broadcast.status == 200)

            let deleted = try await harness.manage("DELETE", port: port, channel: channel)
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            #expect(deleted.headers["apns-request-id"]?.count == 36)
            #expect(harness.sandbox.channels(bundleID: SandboxHarness.bundleID).isEmpty)

            let again = try await harness.broadcast(channel: channel)
            #expect(again.status == 404)
            #expect(again.reason == "ChannelNotRegistered")
            #expect(again.headers["apns-request-id"]?.count == 36)
            let readAgain = try await harness.manage("GET", port: port, channel: channel)
            #expect(readAgain.status == 404)
            #expect(readAgain.reason == "ChannelNotRegistered")
            let listedAgain = try await harness.manage("GET", port: port, endpoint: "all-channels")
            #expect(Self.object(listedAgain.body)?["channels"] as? [String] == [])
            #expect(harness.sandbox.received().map(\.status) == [200, 404])
        }
    }

    @Test func managementRejectionsUseApnsStatusesAndReasons() async throws {
        try await SandboxHarness.withChannelManagement { harness, port in
            let channel = try await harness.createChannel(port: port, policy: 0)
            let old = Date().addingTimeInterval(-3700)
            let valid = SandboxHarness.channelConfiguration(policy: 1)
            let cases: [(String, () async throws -> SandboxHarness.Response, Int, String)] = [
                ("read without a channel", { try await harness.manage("GET", port: port) }, 400, "MissingChannelId"),
                ("delete without a channel", { try await harness.manage("DELETE", port: port) }, 400, "MissingChannelId"),
                ("read, not base64", { try await harness.manage("GET", port: port, channel: "not base64!") }, 400, "BadChannelId"),
                ("delete, base64 without padding", { try await harness.manage("DELETE", port: port, channel: "AAAAAAAAAAAAAAAAAAAAAA") }, 400, "BadChannelId"),
                ("read an unknown channel", { try await harness.manage("GET", port: port, channel: SandboxHarness.unknownChannel) }, 404, "ChannelNotRegistered"),
                ("delete an unknown channel", { try await harness.manage("DELETE", port: port, channel: SandboxHarness.unknownChannel) }, 404, "ChannelNotRegistered"),
                ("another app's channel", { try await harness.manage("GET", port: port, bundleID: "com.other.app", channel: channel) }, 404, "ChannelNotRegistered"),
                ("PUT", { try await harness.manage("PUT", port: port, body: valid) }, 405, "MethodNotAllowed"),
                ("POST all-channels", { try await harness.manage("POST", port: port, endpoint: "all-channels", body: valid) }, 405, "MethodNotAllowed"),
                ("unknown endpoint", { try await harness.manage("GET", port: port, endpoint: "channel") }, 404, "BadPath"),
                ("too deep", { try await harness.manage("GET", port: port, endpoint: "channels/x") }, 404, "BadPath"),
                ("device path", { try await harness.post(path: "/3/device/\(SandboxHarness.token)", port: port) }, 404, "BadPath"),
                ("broadcast path", { try await harness.post(path: "/4/broadcasts/apps/com.example.app", port: port) }, 404, "BadPath"),
                ("control path", { try await harness.post(body: nil, method: "GET", path: "/_sandbox/stats", port: port) }, 404, "BadPath"),
                ("empty configuration", { try await harness.manage("POST", port: port, body: "") }, 400, "PayloadEmpty"),
                ("configuration not JSON", { try await harness.manage("POST", port: port, body: "policy=1") }, 400, "BadPayload"),
                ("configuration not an object", { try await harness.manage("POST", port: port, body: "[1]") }, 400, "BadPayload"),
                ("storage policy 2", { try await harness.manage("POST", port: port, body: SandboxHarness.channelConfiguration(policy: 2)) }, 400, "BadMessageStoragePolicy"),
                ("storage policy as a string", { try await harness.manage("POST", port: port, body: #"{"message-storage-policy":"1","push-type":"LiveActivity"}"#) }, 400, "BadMessageStoragePolicy"),
                ("no storage policy", { try await harness.manage("POST", port: port, body: #"{"push-type":"LiveActivity"}"#) }, 400, "BadMessageStoragePolicy"),
                ("push type alert", { try await harness.manage("POST", port: port, body: #"{"message-storage-policy":0,"push-type":"alert"}"#) }, 400, "InvalidPushType"),
                ("no push type", { try await harness.manage("POST", port: port, body: #"{"message-storage-policy":0}"#) }, 400, "InvalidPushType"),
                ("oversized configuration", { try await harness.manage("POST", port: port, body: String(repeating: " ", count: 5121) + valid) }, 413, "PayloadTooLarge"),
                ("no provider token", { try await harness.manage("POST", port: port, headers: ["authorization": nil], body: valid) }, 403, "MissingProviderToken"),
                ("wrong kid", { try await harness.manage("GET", port: port, endpoint: "all-channels", headers: ["authorization": "bearer \(try harness.providerToken(keyID: "OTHERKEY12"))"]) }, 403, "InvalidProviderToken"),
                ("old iat", { try await harness.manage("POST", port: port, headers: ["authorization": "bearer \(try harness.providerToken(issuedAt: old))"], body: valid) }, 403, "ExpiredProviderToken"),
                ("duplicate header", { try await harness.manage("GET", port: port, channel: channel, extraArguments: ["-H", "apns-foo: 1", "-H", "apns-foo: 2"]) }, 400, "DuplicateHeaders"),
            ]
            for (name, request, status, reason) in cases {
                let response = try await request()
                #expect(response.status == status, "\(name): \(response.body) \(response.curl.stderr)")
                #expect(response.reason == reason, "\(name): \(response.body)")
                #expect(response.headers["apns-request-id"]?.count == 36, "\(name)")
                #expect(response.headers["apns-channel-id"] == nil, "\(name)")
            }
            #expect(harness.sandbox.channels(bundleID: SandboxHarness.bundleID) == [channel: 0], "nothing refused was created")
            #expect(harness.sandbox.channels(bundleID: "com.other.app").isEmpty)
            #expect(harness.sandbox.received().isEmpty, "channel management is not recorded")

            // The request's own apns-request-id is echoed (lowercased) only when it is a UUID.
            let echoed = try await harness.manage("GET", port: port, channel: channel, headers: ["apns-request-id": "0E3F8A9B-1C2D-4E5F-8A9B-0C1D2E3F4A5B"])
            #expect(echoed.status == 200)
            #expect(echoed.headers["apns-request-id"] == "0e3f8a9b-1c2d-4e5f-8a9b-0c1d2e3f4a5b")
            let replaced = try await harness.manage("GET", port: port, channel: channel, headers: ["apns-request-id": "request-1"])
            #expect(replaced.status == 200)
            #expect(replaced.headers["apns-request-id"]?.count == 36)
            #expect(replaced.headers["apns-request-id"] != "request-1")
        }
    }

    @Test func broadcastRejectionsComeInApnsOrder() async throws {
        try await SandboxHarness.withChannelManagement { harness, port in
            let stored = try await harness.createChannel(port: port, policy: 1)
            let unstored = try await harness.createChannel(port: port, policy: 0)
            let otherApps = try await harness.createChannel(port: port, policy: 1, bundleID: "com.other.app")
            let later = "\(Int(Date().timeIntervalSince1970) + 600)"
            let noEvent = #"{"aps":{"timestamp":1700000000,"content-state":{}}}"#
            let cases: [(String, () async throws -> SandboxHarness.Response, Int, String)] = [
                ("no channel", { try await harness.broadcast(channel: nil) }, 400, "MissingChannelId"),
                // The channel is checked before anything else the request got wrong.
                ("no channel, push type alert, no expiration", {
                    try await harness.broadcast(channel: nil, headers: ["apns-push-type": "alert", "apns-expiration": nil])
                }, 400, "MissingChannelId"),
                ("channel not base64", { try await harness.broadcast(channel: "*channel*") }, 400, "BadChannelId"),
                ("unknown channel", { try await harness.broadcast(channel: SandboxHarness.unknownChannel) }, 404, "ChannelNotRegistered"),
                ("unknown channel, no expiration", {
                    try await harness.broadcast(channel: SandboxHarness.unknownChannel, headers: ["apns-expiration": nil])
                }, 404, "ChannelNotRegistered"),
                ("another app's channel", { try await harness.broadcast(channel: otherApps) }, 404, "ChannelNotRegistered"),
                ("push type alert", { try await harness.broadcast(channel: stored, headers: ["apns-push-type": "alert"]) }, 400, "InvalidPushType"),
                ("no push type", { try await harness.broadcast(channel: stored, headers: ["apns-push-type": nil]) }, 400, "InvalidPushType"),
                ("push type before expiration", {
                    try await harness.broadcast(channel: stored, headers: ["apns-push-type": "alert", "apns-expiration": nil])
                }, 400, "InvalidPushType"),
                ("no expiration", { try await harness.broadcast(channel: stored, headers: ["apns-expiration": nil]) }, 400, "BadExpirationDate"),
                ("expiration not a number", { try await harness.broadcast(channel: stored, headers: ["apns-expiration": "soon"]) }, 400, "BadExpirationDate"),
                ("negative expiration", { try await harness.broadcast(channel: stored, headers: ["apns-expiration": "-1"]) }, 400, "BadExpirationDate"),
                ("expiration on a channel that stores nothing", {
                    try await harness.broadcast(channel: unstored, headers: ["apns-expiration": later])
                }, 400, "BadExpirationDate"),
                ("priority 7", { try await harness.broadcast(channel: stored, headers: ["apns-priority": "7"]) }, 400, "BadPriority"),
                ("empty payload", { try await harness.broadcast(channel: stored, body: "") }, 400, "PayloadEmpty"),
                ("oversized payload", { try await harness.broadcast(channel: stored, body: Self.liveActivityPayload(size: 5121)) }, 413, "PayloadTooLarge"),
                ("not JSON", { try await harness.broadcast(channel: stored, body: "score 1-0") }, 400, "BadPayload"),
                ("Live Activity without its event", { try await harness.broadcast(channel: stored, body: noEvent) }, 400, "InvalidPushType"),
                ("no provider token", { try await harness.broadcast(channel: stored, headers: ["authorization": nil]) }, 403, "MissingProviderToken"),
                ("GET", { try await harness.broadcast(channel: stored, body: nil, method: "GET") }, 405, "MethodNotAllowed"),
                ("no bundle ID", { try await harness.post(headers: ["apns-channel-id": stored], path: "/4/broadcasts/apps/") }, 404, "BadPath"),
                ("path too deep", { try await harness.broadcast(channel: stored, bundleID: "com.example.app/x") }, 404, "BadPath"),
            ]
            for (name, request, status, reason) in cases {
                let response = try await request()
                #expect(response.status == status, "\(name): \(response.body) \(response.curl.stderr)")
                #expect(response.reason == reason, "\(name): \(response.body)")
                #expect(response.headers["apns-request-id"]?.count == 36, "\(name)")
                #expect(response.headers["apns-id"] == nil, "\(name)")
            }

            let now = try await harness.broadcast(channel: unstored)
            #expect(now.status == 200, "expiration 0 on a channel that stores nothing: \(now.body)")
            let stays = try await harness.broadcast(channel: stored, headers: ["apns-expiration": later])
            #expect(stays.status == 200)
            let largest = try await harness.broadcast(channel: stored, body: Self.liveActivityPayload(size: 5120))
            #expect(largest.status == 200, "\(largest.body)")

            let statistics = harness.sandbox.statistics()
            #expect(statistics.rejected == cases.count)
            #expect(statistics.accepted == 3)
            let received = harness.sandbox.received()
            #expect(received.count == cases.count + 3)
            let broadcasts = received.filter { $0.channelID != nil }
            #expect(broadcasts.count == received.count, "every request to /4/broadcasts/ is recorded as a broadcast")
            #expect(received.last?.channelID == stored)
            #expect(received.first?.channelID == "", "a broadcast without a channel is recorded with an empty one")
        }
    }

    @Test func certificateConnectionsManageAndBroadcastTheirOwnAppOnly() async throws {
        try await SandboxHarness.withChannelManagement { harness, port in
            let certificate = [
                "--cert", harness.material.clientCertificateFile, "--key", harness.material.clientPrivateKeyFile,
            ]
            let created = try await harness.manage(
                "POST", port: port, headers: ["authorization": nil], body: SandboxHarness.channelConfiguration(policy: 1),
                extraArguments: certificate
            )
            #expect(created.status == 201, "\(created.body) \(created.curl.stderr)")
            let channel = try #require(created.headers["apns-channel-id"])
            let foreign = try await harness.manage(
                "POST", port: port, bundleID: "com.other.app", headers: ["authorization": nil],
                body: SandboxHarness.channelConfiguration(policy: 1), extraArguments: certificate
            )
            #expect(foreign.status == 400)
            #expect(foreign.reason == "TopicDisallowed")

            let sent = try await harness.broadcast(channel: channel, headers: ["authorization": nil], extraArguments: certificate)
            #expect(sent.status == 200, "\(sent.body)")
            #expect(harness.sandbox.received().last?.authentication == "certificate:com.example.app")
            let elsewhere = try await harness.broadcast(
                channel: channel, bundleID: "com.other.app", headers: ["authorization": nil], extraArguments: certificate
            )
            #expect(elsewhere.status == 400)
            #expect(elsewhere.reason == "TopicDisallowed")
        }
    }

    @Test func allowedTopicsApplyToChannelsAndBroadcasts() async throws {
        try await SandboxHarness.withChannelManagement({ $0.allowedTopics = [SandboxHarness.bundleID] }) { harness, port in
            let channel = try await harness.createChannel(port: port)
            let refused = try await harness.manage("POST", port: port, bundleID: "com.other.app", body: SandboxHarness.channelConfiguration(policy: 1))
            #expect(refused.status == 400)
            #expect(refused.reason == "TopicDisallowed")
            let listed = try await harness.manage("GET", port: port, endpoint: "all-channels", bundleID: "com.other.app")
            #expect(listed.reason == "TopicDisallowed")
            let broadcast = try await harness.broadcast(channel: channel, bundleID: "com.other.app")
            #expect(broadcast.status == 400)
            #expect(broadcast.reason == "TopicDisallowed")
            #expect(try await harness.broadcast(channel: channel).status == 200)
        }
    }

    @Test func scriptedRulesAnswerBroadcastsByChannel() async throws {
        try await SandboxHarness.withChannelManagement { harness, port in
            let channel = try await harness.createChannel(port: port)
            let other = try await harness.createChannel(port: port)
            // Set as another process would: a channel rule, and a token rule that must not touch broadcasts.
            let rules = #"[{"channel":"\#(channel)","status":403,"reason":"FeatureNotEnabled","times":1},{"tokenPrefix":"","status":410,"reason":"Unregistered"}]"#
            let put = try await harness.post(headers: ["authorization": nil], body: rules, method: "PUT", path: "/_sandbox/rules")
            #expect(put.status == 200, "\(put.body)")

            let refused = try await harness.broadcast(channel: channel)
            #expect(refused.status == 403)
            #expect(refused.reason == "FeatureNotEnabled")
            #expect(refused.headers["apns-request-id"]?.count == 36)
            #expect(refused.headers["apns-id"] == nil)
            #expect(try await harness.broadcast(channel: channel).status == 200, "the rule was for one broadcast")
            #expect(try await harness.post().status == 410, "a token rule still answers device pushes")

            harness.sandbox.setRules([SandboxRule(channel: other, reason: .channelNotRegistered)])
            let gone = try await harness.broadcast(channel: other)
            #expect(gone.status == 404)
            #expect(gone.reason == "ChannelNotRegistered")
            #expect(try await harness.broadcast(channel: channel).status == 200)
            #expect(try await harness.post().status == 200, "a channel rule never answers device pushes")

            harness.sandbox.setRules([SandboxRule(status: 503, reason: "ServiceUnavailable", times: 2)])
            #expect(try await harness.broadcast(channel: channel).status == 503, "a rule without token or channel answers broadcasts too")
            #expect(try await harness.post().status == 503)
            #expect(try await harness.broadcast(channel: channel).status == 200)

            let lines = try await harness.post(headers: ["authorization": nil], body: nil, method: "GET", path: "/_sandbox/received")
            let rows = lines.body.split(separator: "\n")
            #expect(rows.first?.contains(#""channel_id":"\#(channel)""#) == true, "\(lines.body)")
            #expect(rows.first?.contains(#""reason":"FeatureNotEnabled""#) == true)
            let deviceRows = rows.filter { $0.contains(#""channel_id":null"#) }
            #expect(deviceRows.count == 3)
        }
    }

    /// Apple's 10,000 channels per app, filled by h2load over one connection.
    @Test func anAppHasAtMostTenThousandChannels() async throws {
        try await SandboxHarness.withChannelManagement { harness, port in
            let body = try harness.writeFile("channel.json", SandboxHarness.channelConfiguration(policy: 0))
            let result = try await ExternalTool.run("h2load", [
                "-n", "10000", "-c", "1", "-m", "50", "-d", body, "-H", "authorization: bearer \(try harness.providerToken())",
                "https://127.0.0.1:\(port)/1/apps/\(SandboxHarness.bundleID)/channels",
            ], timeout: .seconds(300))
            let summary = H2LoadSummary(result.stdout)
            #expect(summary.status2xx == 10_000, "\(result.stdout) \(result.stderr)")
            let channels = harness.sandbox.channels(bundleID: SandboxHarness.bundleID)
            #expect(channels.count == 10_000)

            let refused = try await harness.manage("POST", port: port, body: SandboxHarness.channelConfiguration(policy: 0))
            #expect(refused.status == 400)
            #expect(refused.reason == "TooManyChannels")
            #expect(try await harness.createChannel(port: port, bundleID: "com.other.app").count == 24, "the limit is per app")

            let first = try #require(channels.keys.first)
            #expect(try await harness.manage("DELETE", port: port, channel: first).status == 204)
            #expect(try await harness.createChannel(port: port).count == 24, "room again once one is deleted")
            let listed = try await harness.manage("GET", port: port, endpoint: "all-channels")
            #expect((Self.object(listed.body)?["channels"] as? [String])?.count == 10_000)
        }
    }

    @Test func channelManagementStartsAfterStartAndStopsWithTheSandbox() async throws {
        let early = APNsSandbox(configuration: SandboxConfiguration(), logger: .init(label: "sandbox-test"))
        await #expect(throws: SandboxError.self) { _ = try await early.startChannelManagement() }
        var port = 0
        try await SandboxHarness.with { harness in
            port = try await harness.sandbox.startChannelManagement()
            await #expect(throws: SandboxError.self) { _ = try await harness.sandbox.startChannelManagement() }
            #expect(try await harness.createChannel(port: port).count == 24)
        }
        let after = try await ExternalTool.run("curl", [
            "--http2", "-sS", "--insecure", "--max-time", "10", "https://127.0.0.1:\(port)/1/apps/com.example.app/all-channels",
        ])
        #expect(after.status != 0, "the management listener is closed: \(after.stdout)")
    }

    /// A Live Activity update of exactly `size` bytes.
    static func liveActivityPayload(size: Int) -> String {
        let prefix = #"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"note":""#
        let suffix = #""}}}"#
        return prefix + String(repeating: "x", count: size - prefix.utf8.count - suffix.utf8.count) + suffix
    }
}
