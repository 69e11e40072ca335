import NIOCore
import NIOHTTP2
import APNsCore

/// Applies the rules of Apple's "Sending broadcast push notification requests to APNs" to one
/// complete `POST /4/broadcasts/apps/<bundle ID>` on the push listener, filling `draft` as far as
/// it gets (as `SandboxRequestValidator` does for device pushes), so rejected broadcasts are
/// recorded with what the client sent.
struct SandboxBroadcastValidator {
    static let pathPrefix = "/4/broadcasts/"
    /// Apple's limit for a broadcast's payload.
    static let maxPayloadBytes = 5120

    let keyring: SandboxKeyring
    let allowedBundleIDs: Set<String>
    let channels: SandboxChannels

    func validate(
        headers: HTTP2Frame.FramePayload.Headers,
        body: ByteBuffer?,
        bodyLength: Int,
        identity: SandboxClientIdentity,
        tokens: inout ProviderTokenCache,
        now: ContinuousClock.Instant,
        epochSeconds: Int,
        uuids: inout SandboxUUIDGenerator,
        draft: inout SandboxDraft
    ) -> SandboxRequestValidator.Outcome {
        var outcome = SandboxRequestValidator.Outcome()
        var fields = SandboxRequestFields()
        fields.read(headers)

        // Broadcasts are answered with `apns-request-id`, not `apns-id`: the request's own when it
        // is a UUID, else a new one (APNs refuses no broadcast for it).
        if let id = fields.requestID, SandboxUUID.isCanonical(id) {
            draft.apnsID = id.lowercased()
        } else {
            draft.apnsID = uuids.next()
        }
        draft.channelID = fields.channelID ?? ""
        draft.pushType = fields.pushType ?? ""
        func reject(_ reason: APNsReason) -> SandboxRequestValidator.Outcome {
            draft.status = reason.status ?? 400
            draft.reason = reason.rawValue
            return outcome
        }

        guard fields.method == "POST" else { return reject(.methodNotAllowed) }
        guard let bundleID = Self.bundleID(inPath: fields.route) else { return reject(.badPath) }
        draft.topic = bundleID
        guard !fields.duplicated else { return reject(.duplicateHeaders) }

        let authentication = SandboxAuthentication.check(
            identity: identity, authorization: fields.authorization, certificateCovers: { $0 == bundleID },
            keyring: self.keyring, tokens: &tokens, now: now, epochSeconds: epochSeconds
        )
        draft.authentication = authentication.label
        if let rejection = authentication.rejection { return reject(rejection) }
        if authentication.tokenAuthenticated {
            draft.recordAcceptedToken(tokens)
            outcome.tokenAuthenticated = true
        }
        if !self.allowedBundleIDs.isEmpty, !self.allowedBundleIDs.contains(bundleID) { return reject(.topicDisallowed) }

        guard let channelID = fields.channelID else { return reject(.missingChannelId) }
        guard SandboxChannelID.isWellFormed(channelID) else { return reject(.badChannelId) }
        guard let storagePolicy = self.channels.storagePolicy(bundleID: bundleID, channelID: channelID) else {
            return reject(.channelNotRegistered)
        }
        guard fields.pushType == APNsPushType.liveactivity.rawValue else { return reject(.invalidPushType) }
        guard let expiration = fields.expiration, !expiration.isEmpty, expiration.utf8.allSatisfy(\.isDecimalDigit),
              let expirationValue = Int(expiration) else {
            return reject(.badExpirationDate)
        }
        draft.expiration = expirationValue
        // A channel that stores no message can only deliver now.
        if storagePolicy == 0, expirationValue != 0 { return reject(.badExpirationDate) }
        if let priority = fields.priority {
            guard let value = Int(priority), value == 1 || value == 5 || value == 10 else { return reject(.badPriority) }
            draft.priority = value
        }

        guard bodyLength > 0 else { return reject(.payloadEmpty) }
        guard bodyLength <= Self.maxPayloadBytes, let body else { return reject(.payloadTooLarge) }
        draft.payload = Array(body.readableBytesView)
        guard SandboxRequestValidator.isJSONObject(draft.payload) else {
            draft.status = 400
            draft.reason = SandboxRequestValidator.badPayloadReason
            return outcome
        }
        // As for a device's Live Activity push: what Apple may drop silently is refused here.
        if APNsPushTypeRule.rule(for: .liveactivity).problem(inPayload: draft.payload) != nil { return reject(.invalidPushType) }
        return outcome
    }

    /// The bundle ID of `/4/broadcasts/apps/<bundle ID>`, or nil for any other path.
    static func bundleID(inPath path: Substring) -> String? {
        SandboxPath.segment(of: path, after: "/4/broadcasts/apps/")
    }
}
