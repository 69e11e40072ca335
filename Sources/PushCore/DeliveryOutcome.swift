/// What one APNs answer means for the device it was sent to.
public enum DeliveryOutcome: Sendable, Hashable {
    /// Accepted by APNs.
    case sent
    /// The token is dead for this app and environment: applications should delete it.
    case tokenInvalid(reason: String)
    /// Retrying cannot help (a malformed request, a payload APNs refuses).
    case permanentFailure(reason: String)
    /// Worth trying again later (throttling, APNs trouble, a lost connection).
    case retryable(reason: String)
    /// APNs never processed the request (no connection could be made, the stream was refused, or
    /// it timed out before it was sent): an outage, not the device's fault. The device waits for
    /// APNs without using up one of its attempts.
    case unavailable(reason: String)
    /// The provider token is stale: mint a fresh JWT, then retry once.
    case refreshCredentials(reason: String)
    /// The credentials or configuration are wrong; the device is not to blame, the job must wait.
    case credentialsProblem(reason: String)

    /// Maps an APNs `:status` and `reason` to an outcome (PROTOCOLS.md §1.4). Unknown reasons fall
    /// back on the status class so a new Apple reason never silently drops a device.
    public init(status: Int, reason: String?) {
        if status == 200 { self = .sent; return }
        let reasonText = reason ?? "HTTP \(status)"
        if let known = reason.flatMap(APNsReason.init(rawValue:)) {
            self = Self.outcome(for: known)
            return
        }
        switch status {
        case 410: self = .tokenInvalid(reason: reasonText)
        case 403: self = .credentialsProblem(reason: reasonText)
        case 429, 500...599: self = .retryable(reason: reasonText)
        default: self = .permanentFailure(reason: reasonText)
        }
    }

    private static func outcome(for reason: APNsReason) -> DeliveryOutcome {
        let text = reason.rawValue
        switch reason {
        case .badDeviceToken, .deviceTokenNotForTopic, .expiredToken, .unregistered:
            return .tokenInvalid(reason: text)
        case .badCollapseId, .badExpirationDate, .badMessageId, .badPriority, .duplicateHeaders,
             .invalidPushType, .missingDeviceToken, .payloadEmpty, .badPath, .methodNotAllowed, .payloadTooLarge:
            return .permanentFailure(reason: text)
        case .badTopic, .missingTopic, .topicDisallowed:
            // A topic the credentials may not use: every device of the job would fail the same way.
            return .permanentFailure(reason: text)
        case .idleTimeout, .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown,
             .tooManyProviderTokenUpdates, .unrelatedKeyIdInToken:
            return .retryable(reason: text)
        case .expiredProviderToken:
            return .refreshCredentials(reason: text)
        case .badCertificate, .badCertificateEnvironment, .forbidden, .invalidProviderToken,
             .missingProviderToken, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken:
            return .credentialsProblem(reason: text)
        }
    }
}
