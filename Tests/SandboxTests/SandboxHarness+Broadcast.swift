import Foundation
import Sandbox
import Testing

/// Broadcasts (on the push listener) and channel management (on its own listener), sent with curl.
extension SandboxHarness {
    static let bundleID = "com.example.app"
    /// A Live Activity update, as broadcasts carry.
    static let liveActivityPayload = #"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"score":"1-0"}}}"#
    /// Well-formed base64 of 16 bytes that no sandbox hands out (it never draws 16 zero bytes in practice).
    static let unknownChannel = "AAAAAAAAAAAAAAAAAAAAAA=="

    static func channelConfiguration(policy: Int) -> String {
        #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#
    }

    /// A channel-management request to the listener on `port`, with a provider token unless overridden.
    func manage(
        _ method: String,
        port: Int,
        endpoint: String = "channels",
        bundleID: String = Self.bundleID,
        channel: String? = nil,
        headers: [String: String?] = [:],
        body: String? = nil,
        extraArguments: [String] = []
    ) async throws -> Response {
        var all: [String: String?] = ["apns-topic": nil, "apns-push-type": nil, "apns-channel-id": channel]
        for (name, value) in headers { all[name] = value }
        return try await self.post(
            headers: all, body: body, method: method, path: "/1/apps/\(bundleID)/\(endpoint)", port: port, extraArguments: extraArguments
        )
    }

    /// Creates a channel and returns its ID.
    func createChannel(port: Int, policy: Int = 1, bundleID: String = Self.bundleID) async throws -> String {
        let response = try await self.manage("POST", port: port, bundleID: bundleID, body: Self.channelConfiguration(policy: policy))
        try #require(response.status == 201, "\(response.body) \(response.curl.stderr)")
        return try #require(response.headers["apns-channel-id"])
    }

    /// A broadcast: push type liveactivity and expiration 0 unless overridden (nil leaves a header out).
    func broadcast(
        channel: String?,
        bundleID: String = Self.bundleID,
        headers: [String: String?] = [:],
        body: String? = Self.liveActivityPayload,
        method: String = "POST",
        extraArguments: [String] = []
    ) async throws -> Response {
        var all: [String: String?] = [
            "apns-topic": nil, "apns-push-type": "liveactivity", "apns-expiration": "0", "apns-channel-id": channel,
        ]
        for (name, value) in headers { all[name] = value }
        return try await self.post(
            headers: all, body: body, method: method, path: "/4/broadcasts/apps/\(bundleID)", extraArguments: extraArguments
        )
    }

    /// Runs `body` against a fresh sandbox with its channel-management listener started.
    static func withChannelManagement(
        _ configure: (inout SandboxConfiguration) -> Void = { _ in },
        _ body: (SandboxHarness, _ managementPort: Int) async throws -> Void
    ) async throws {
        try await self.with(configure) { harness in
            let port = try await harness.sandbox.startChannelManagement()
            try await body(harness, port)
        }
    }
}
