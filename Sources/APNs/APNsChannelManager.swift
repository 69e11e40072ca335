import APNsCore
import HTTP2
import Logging
import PushCore

/// Creates, reads, lists and deletes an app's Live Activity broadcast channels over APNs' channel-
/// management API (Apple, "Sending channel management requests to APNs"): `POST`, `GET` and
/// `DELETE /1/apps/<bundle ID>/channels` (the channel in the `apns-channel-id` header) and
/// `GET /1/apps/<bundle ID>/all-channels`, on the management host, with the app's credentials.
public final class APNsChannelManager: Sendable {
    /// Apple allows at most this many channels per app and environment.
    public static let channelLimit = 10_000
    /// A list of 10,000 ids of a few dozen bytes each, with room: anything larger is not APNs.
    static let maxListBytes = 1024 * 1024

    private let http: HTTP2Client
    private let bundleID: String
    private let tokenProvider: APNsTokenProvider?

    public init(configuration: APNsConfiguration, logger: Logger) throws(APNsConfigurationError) {
        guard let topic = configuration.topic, !topic.isEmpty else {
            throw APNsConfigurationError("topic: channels belong to a bundle ID; give the app's topic")
        }
        let endpoint = try configuration.channelManagementEndpoint()
        var http = HTTP2ClientConfiguration(host: endpoint.host, port: endpoint.port)
        http.extraCAFile = configuration.extraCAFile
        http.proxy = configuration.proxy
        http.maxConnections = 1
        http.requestTimeout = configuration.requestTimeout
        http.connectTimeout = configuration.connectTimeout
        http.keptResponseHeaders = ["apns-channel-id", "apns-request-id"]
        http.responseLimits.maxBodyBytes = Self.maxListBytes
        if case let .certificate(identity) = configuration.credentials { http.identity = identity }
        self.http = HTTP2Client(configuration: http, logger: logger)
        self.bundleID = topic
        if case let .token(provider) = configuration.credentials { tokenProvider = provider } else { tokenProvider = nil }
    }

    /// A new channel; returns its id.
    public func create(storagePolicy: APNsChannelStoragePolicy) async throws(APNsChannelError) -> String {
        let body = Array(#"{"message-storage-policy":\#(storagePolicy.rawValue),"push-type":"LiveActivity"}"#.utf8)
        let response = try await send("POST", path: channelsPath, body: body)
        guard response.status == 201 || response.status == 200 else { throw Self.failure(response) }
        guard let id = response.header("apns-channel-id"), Self.isChannelID(id) else {
            throw APNsChannelError(status: response.status, reason: "the answer named no usable apns-channel-id", requestID: response.header("apns-request-id"))
        }
        return id
    }

    /// The channel's storage policy.
    public func read(_ channelID: String) async throws(APNsChannelError) -> APNsChannelStoragePolicy {
        let response = try await send("GET", path: channelsPath, channelID: channelID)
        guard response.status == 200 else { throw Self.failure(response) }
        guard case let .object(members)? = try? JSONValue.parse(response.body), case let .int(value)? = members["message-storage-policy"],
              let policy = APNsChannelStoragePolicy(rawValue: Int(clamping: value)) else {
            throw APNsChannelError(status: response.status, reason: "the answer is not {\"message-storage-policy\": 0 or 1}",
                                   requestID: response.header("apns-request-id"))
        }
        return policy
    }

    public func delete(_ channelID: String) async throws(APNsChannelError) {
        let response = try await send("DELETE", path: channelsPath, channelID: channelID)
        guard response.status == 204 || response.status == 200 else { throw Self.failure(response) }
    }

    /// Every channel of the app in this environment.
    public func list() async throws(APNsChannelError) -> [String] {
        let response = try await send("GET", path: "/1/apps/\(bundleID)/all-channels")
        guard response.status == 200 else { throw Self.failure(response) }
        guard case let .object(members)? = try? JSONValue.parse(response.body), case let .array(values)? = members["channels"] else {
            throw APNsChannelError(status: response.status, reason: "the answer is not {\"channels\": [...]}", requestID: response.header("apns-request-id"))
        }
        return values.compactMap { value in
            guard case let .string(id) = value, Self.isChannelID(id) else { return nil }
            return id
        }
    }

    public func shutdown() async { await http.shutdown() }

    /// A channel id as APNs writes them (`APNsChannelID`): checked before it goes into a header
    /// or the registry, since it comes from the network or a user.
    public static func isChannelID(_ text: String) -> Bool { APNsChannelID.isValid(text) }

    private var channelsPath: String { "/1/apps/\(bundleID)/channels" }

    private func send(_ method: String, path: String, channelID: String? = nil, body: [UInt8] = []) async throws(APNsChannelError) -> HTTP2Response {
        var headers: [HTTP2Header] = []
        if let channelID {
            guard Self.isChannelID(channelID) else { throw APNsChannelError(status: 0, reason: "\(channelID) is not a channel id (base64)") }
            headers.append(HTTP2Header(name: "apns-channel-id", value: channelID))
        }
        if !body.isEmpty { headers.append(HTTP2Header(name: "content-type", value: "application/json")) }
        if let tokenProvider {
            do {
                headers.append(HTTP2Header(name: "authorization", value: try tokenProvider.authorizationHeader(), neverIndex: true))
            } catch {
                throw APNsChannelError(status: 0, reason: "cannot sign a provider token: \(error.message)")
            }
        }
        do {
            return try await http.send(HTTP2Request(method: method, path: path, headers: headers, body: body))
        } catch {
            throw APNsChannelError(status: 0, reason: "no answer from the channel-management host: \(error)")
        }
    }

    private static func failure(_ response: HTTP2Response) -> APNsChannelError {
        var reason = "HTTP \(response.status)"
        if case let .object(members)? = try? JSONValue.parse(response.body), case let .string(text)? = members["reason"] {
            reason = String(text.prefix(100))
        }
        return APNsChannelError(status: response.status, reason: reason, requestID: response.header("apns-request-id"))
    }
}
