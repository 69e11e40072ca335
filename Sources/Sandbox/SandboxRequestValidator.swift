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
        var fields = RequestFields()
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
        let fullPath = fields.path ?? ""
        let path = fullPath[..<(fullPath.utf8.firstIndex(of: UInt8(ascii: "?")) ?? fullPath.endIndex)]
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

        switch identity {
        case .certificate(let bundleID):
            draft.authentication = "certificate:\(bundleID)"
            // A single-topic certificate lets the client omit apns-topic.
            if fields.topic == nil { draft.topic = bundleID }
            guard Self.topic(draft.topic, belongsTo: bundleID) else { return reject(.topicDisallowed) }
        case .unusableCertificate:
            return reject(.badCertificate)
        case .none:
            let result = tokens.authenticate(
                authorization: fields.authorization, keyring: self.keyring, now: now, epochSeconds: epochSeconds
            )
            switch result {
            case .rejected(let reason): return reject(reason)
            case .valid(let verified):
                draft.authentication = "token:\(verified.keyID)"
                if let accepted = tokens.acceptedToken {
                    draft.providerToken = accepted.jwt
                    draft.teamID = accepted.teamID
                }
                outcome.tokenAuthenticated = true
            }
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

/// The headers the sandbox looks at, read in one pass (HTTP/2 header names are lowercase).
private struct RequestFields {
    var method: String?
    var path: String?
    var authorization: String?
    var topic: String?
    var pushType: String?
    var priority: String?
    var expiration: String?
    var apnsID: String?
    var collapseID: String?
    /// Other `apns-*` headers, only to spot duplicates among them.
    var otherAPNsHeaders: [String] = []
    var duplicated = false

    mutating func read(_ frame: HTTP2Frame.FramePayload.Headers) {
        for (name, value, _) in frame.headers {
            switch name {
            case ":method": self.method = value
            case ":path": self.path = value
            case "authorization": Self.set(&self.authorization, value, &self.duplicated)
            case "apns-topic": Self.set(&self.topic, value, &self.duplicated)
            case "apns-push-type": Self.set(&self.pushType, value, &self.duplicated)
            case "apns-priority": Self.set(&self.priority, value, &self.duplicated)
            case "apns-expiration": Self.set(&self.expiration, value, &self.duplicated)
            case "apns-id": Self.set(&self.apnsID, value, &self.duplicated)
            case "apns-collapse-id": Self.set(&self.collapseID, value, &self.duplicated)
            default:
                if name.hasPrefix("apns-") {
                    if self.otherAPNsHeaders.contains(name) { self.duplicated = true }
                    self.otherAPNsHeaders.append(name)
                }
            }
        }
    }

    private static func set(_ field: inout String?, _ value: String, _ duplicated: inout Bool) {
        if field != nil { duplicated = true }
        field = value
    }
}
