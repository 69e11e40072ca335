import NIOCore
import NIOHTTP2
import APNsCore
import PushCore

/// How the TLS client identified itself.
enum SandboxClientIdentity: Sendable, Hashable {
    /// A certificate signed by the sandbox CA, for this bundle ID (its subject UID).
    case certificate(bundleID: String)
    /// A CA-signed certificate without a bundle ID in its subject.
    case unusableCertificate
    /// No client certificate: requests need a provider token.
    case none
}

/// Applies APNs' request rules (Apple's "Sending notification requests to APNs" and the connection guides) to one complete request, filling `draft`
/// as far as it gets so that rejected requests are recorded with what the client sent.
struct SandboxRequestValidator {
    let keyring: SandboxKeyring
    let allowedBundleIDs: Set<String>

    /// Not an Apple reason: APNs documents none for a body that is not a JSON object.
    static let badPayloadReason = "BadPayload"

    struct Outcome {
        /// The first successful token authentication on a connection lifts its stream limit.
        var tokenAuthenticated = false
    }

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
    ) -> Outcome {
        var outcome = Outcome()
        var fields = SandboxRequestFields()
        fields.read(headers)

        if let id = fields.apnsID, SandboxUUID.isCanonical(id) {
            draft.apnsID = id.lowercased()
        } else {
            draft.apnsID = uuids.next()
        }
        func reject(_ reason: APNsReason) -> Outcome {
            draft.status = reason.status ?? 400
            draft.reason = reason.rawValue
            return outcome
        }

        guard fields.method == "POST" else { return reject(.methodNotAllowed) }
        // Byte-level scans here: with Foundation loaded, `contains("/")` would go through CFString.
        let path = fields.route
        let devicePrefix = "/3/device"
        guard path.hasPrefix(devicePrefix) else { return reject(.badPath) }
        var token = path.dropFirst(devicePrefix.count)
        if !token.isEmpty {
            guard token.first == "/" else { return reject(.badPath) }
            token = token.dropFirst()
        }
        guard !token.isEmpty else { return reject(.missingDeviceToken) }
        guard !token.utf8.contains(UInt8(ascii: "/")) else { return reject(.badPath) }
        draft.token = token.lowercased()
        draft.topic = fields.topic ?? ""
        draft.pushType = fields.pushType ?? ""
        guard !fields.duplicated else { return reject(.duplicateHeaders) }

        // A single-topic certificate lets the client omit apns-topic.
        if case .certificate(let bundleID) = identity, fields.topic == nil { draft.topic = bundleID }
        let topic = draft.topic
        let authentication = SandboxAuthentication.check(
            identity: identity, authorization: fields.authorization, certificateCovers: { Self.topic(topic, belongsTo: $0) },
            keyring: self.keyring, tokens: &tokens, now: now, epochSeconds: epochSeconds
        )
        draft.authentication = authentication.label
        if let rejection = authentication.rejection { return reject(rejection) }
        if authentication.tokenAuthenticated {
            draft.recordAcceptedToken(tokens)
            outcome.tokenAuthenticated = true
        }

        guard Self.isValidDeviceToken(token) else { return reject(.badDeviceToken) }
        guard !draft.topic.isEmpty else { return reject(.missingTopic) }
        let pushType: APNsPushType
        if let raw = fields.pushType {
            guard let parsed = APNsPushType(rawValue: raw) else { return reject(.invalidPushType) }
            pushType = parsed
        } else {
            pushType = .alert
            draft.pushType = pushType.rawValue
        }
        if let suffix = pushType.topicSuffix, !draft.topic.hasSuffix(suffix) { return reject(.badTopic) }
        if !self.allowedBundleIDs.isEmpty, !self.allowedBundleIDs.contains(pushType.bundleID(fromTopic: draft.topic)) {
            return reject(.topicDisallowed)
        }

        if let priority = fields.priority {
            guard let value = Int(priority), value == 1 || value == 5 || value == 10 else { return reject(.badPriority) }
            draft.priority = value
        }
        if let expiration = fields.expiration {
            guard !expiration.isEmpty, expiration.utf8.allSatisfy(\.isDecimalDigit), let value = Int(expiration) else {
                return reject(.badExpirationDate)
            }
            draft.expiration = value
        }
        if let id = fields.apnsID, !SandboxUUID.isCanonical(id) { return reject(.badMessageId) }
        if let collapseID = fields.collapseID {
            guard collapseID.utf8.count <= 64 else { return reject(.badCollapseId) }
            draft.collapseID = collapseID
        }

        guard bodyLength > 0 else { return reject(.payloadEmpty) }
        guard bodyLength <= pushType.maxPayloadBytes, let body else { return reject(.payloadTooLarge) }
        draft.payload = Array(body.readableBytesView)
        guard Self.isJSONObject(draft.payload) else {
            draft.status = 400
            draft.reason = Self.badPayloadReason
            return outcome
        }
        // Apple may delay or drop, without an error, a push whose payload does not fit its type
        // (a background push with an alert, a Live Activity without its event): the sandbox
        // refuses it, so that a test sees what a device would silently miss.
        if APNsPushTypeRule.rule(for: pushType).problem(inPayload: draft.payload) != nil { return reject(.invalidPushType) }
        return outcome
    }

    /// Apple doesn't fix the length; real tokens are 32 bytes, newer ones up to 100.
    /// APNs takes one JSON object as the payload; checked with the worker's own strict parser.
    static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        var parser = JSONParser(bytes)
        guard case .members? = try? parser.parseTopLevel() else { return false }
        return true
    }

    static func isValidDeviceToken(_ token: Substring) -> Bool {
        let count = token.utf8.count
        return count >= 64 && count <= 200 && count % 2 == 0 && token.utf8.allSatisfy(\.isHexDigit)
    }

    /// The certificate's bundle ID, or it followed by one of the push types' suffixes.
    static func topic(_ topic: String, belongsTo bundleID: String) -> Bool {
        guard topic.hasPrefix(bundleID) else { return false }
        let rest = topic.dropFirst(bundleID.count)
        return rest.isEmpty || APNsPushType.allCases.contains { $0.topicSuffix.map { rest == $0 } ?? false }
    }
}
