import NIOCore
import NIOHTTP2
import APNsCore
import PushCore

/// APNs' channel-management API (Apple's "Sending channel management requests to APNs"), served on
/// the sandbox's second listener with the push listener's authentication:
///   POST   /1/apps/<bundle ID>/channels       {"message-storage-policy":0|1,"push-type":"LiveActivity"} → 201, `apns-channel-id`
///   GET    /1/apps/<bundle ID>/channels       `apns-channel-id` → 200 {"message-storage-policy":n,"push-type":"LiveActivity"}
///   DELETE /1/apps/<bundle ID>/channels       `apns-channel-id` → 204
///   GET    /1/apps/<bundle ID>/all-channels   → 200 {"channels":[…]}
/// Every answer carries `apns-request-id`. Management requests are not recorded and take no rules or faults.
struct SandboxChannelManagement {
    /// The sandbox's own reason words, where Apple names none.
    static let badStoragePolicyReason = "BadMessageStoragePolicy"
    static let tooManyChannelsReason = "TooManyChannels"
    static let tooManyBundleIDsReason = "TooManyBundleIDs"
    /// A channel's configuration is a few dozen bytes; this is generous.
    static let maxBodyBytes = 5120
    static let pushType = "LiveActivity"

    let keyring: SandboxKeyring
    let allowedBundleIDs: Set<String>
    let channels: SandboxChannels

    struct Answer {
        var status: Int
        var requestID: String
        /// Sent as `apns-channel-id` (a created channel).
        var channelID: String?
        /// A JSON body, or none.
        var json: String?
        var tokenAuthenticated = false
    }

    private enum Endpoint {
        case channels
        case allChannels
    }

    func answer(
        headers: HTTP2Frame.FramePayload.Headers,
        body: ByteBuffer?,
        bodyLength: Int,
        identity: SandboxClientIdentity,
        tokens: inout ProviderTokenCache,
        now: ContinuousClock.Instant,
        epochSeconds: Int,
        uuids: inout SandboxUUIDGenerator
    ) -> Answer {
        var fields = SandboxRequestFields()
        fields.read(headers)
        let requestID = fields.requestID.flatMap { SandboxUUID.isCanonical($0) ? $0.lowercased() : nil } ?? uuids.next()
        var answer = Answer(status: 200, requestID: requestID)
        func reject(_ reason: APNsReason) -> Answer { self.reject(answer, reason) }

        guard let route = SandboxPath.segments(of: fields.route, after: "/1/apps/") else { return reject(.badPath) }
        let bundleID = route.first
        let endpoint: Endpoint
        switch route.second {
        case "channels": endpoint = .channels
        case "all-channels": endpoint = .allChannels
        default: return reject(.badPath)
        }
        let method = fields.method ?? ""
        switch (endpoint, method) {
        case (.channels, "POST"), (.channels, "GET"), (.channels, "DELETE"), (.allChannels, "GET"): break
        default: return reject(.methodNotAllowed)
        }
        guard !fields.duplicated else { return reject(.duplicateHeaders) }

        let authentication = SandboxAuthentication.check(
            identity: identity, authorization: fields.authorization, certificateCovers: { $0 == bundleID },
            keyring: self.keyring, tokens: &tokens, now: now, epochSeconds: epochSeconds
        )
        answer.tokenAuthenticated = authentication.tokenAuthenticated
        if let rejection = authentication.rejection { return reject(rejection) }
        if !self.allowedBundleIDs.isEmpty, !self.allowedBundleIDs.contains(bundleID) { return reject(.topicDisallowed) }

        switch (endpoint, method) {
        case (.allChannels, _):
            let ids = self.channels.channels(bundleID: bundleID).keys.sorted()
            // Base64 needs no JSON escaping.
            answer.json = #"{"channels":["# + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
            return answer
        case (_, "POST"):
            return self.create(answer, bundleID: bundleID, body: body, bodyLength: bodyLength)
        default:
            guard let channelID = fields.channelID else { return reject(.missingChannelId) }
            guard SandboxChannelID.isWellFormed(channelID) else { return reject(.badChannelId) }
            if method == "DELETE" {
                guard self.channels.delete(bundleID: bundleID, channelID: channelID) else { return reject(.channelNotRegistered) }
                answer.status = 204
                return answer
            }
            guard let policy = self.channels.storagePolicy(bundleID: bundleID, channelID: channelID) else {
                return reject(.channelNotRegistered)
            }
            answer.json = #"{"message-storage-policy":\#(policy),"push-type":"\#(Self.pushType)"}"#
            return answer
        }
    }

    private func create(_ answer: Answer, bundleID: String, body: ByteBuffer?, bodyLength: Int) -> Answer {
        guard bodyLength > 0 else { return self.reject(answer, .payloadEmpty) }
        guard bodyLength <= Self.maxBodyBytes, let body else { return self.reject(answer, .payloadTooLarge) }
        guard case let .object(configuration)? = try? JSONValue.parse(Array(body.readableBytesView)) else {
            return self.reject(answer, status: 400, reason: SandboxRequestValidator.badPayloadReason)
        }
        guard let policy = configuration["message-storage-policy"]?.exactInteger, policy == 0 || policy == 1 else {
            return self.reject(answer, status: 400, reason: Self.badStoragePolicyReason)
        }
        guard configuration["push-type"] == .string(Self.pushType) else { return self.reject(answer, .invalidPushType) }
        switch self.channels.create(bundleID: bundleID, storagePolicy: policy) {
        case .success(let channelID):
            var created = answer
            created.status = 201
            created.channelID = channelID
            return created
        case .failure(.tooManyChannels):
            return self.reject(answer, status: 400, reason: Self.tooManyChannelsReason)
        case .failure(.tooManyBundleIDs):
            return self.reject(answer, status: 400, reason: Self.tooManyBundleIDsReason)
        }
    }

    private func reject(_ answer: Answer, _ reason: APNsReason) -> Answer {
        self.reject(answer, status: reason.status ?? 400, reason: reason.rawValue)
    }

    /// Reasons here are APNs' or the sandbox's constants: nothing to escape.
    private func reject(_ answer: Answer, status: Int, reason: String) -> Answer {
        var rejected = answer
        rejected.status = status
        rejected.json = #"{"reason":"\#(reason)"}"#
        return rejected
    }
}
