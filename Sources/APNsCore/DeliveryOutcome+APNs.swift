import PushCore

extension DeliveryOutcome {
    /// Maps an APNs `:status` and `reason` to an outcome (Apple, "Handling notification responses from APNs"). A reason this
    /// project does not know falls back on the status class, so a new Apple reason never silently
    /// drops a device.
    public init(apnsStatus status: Int, reason: String?) {
        if status == 200 { self = .sent; return }
        let reasonText = reason ?? "HTTP \(status)"
        if let reason, case let known = APNsReason(rawValue: reason), let outcome = Self.outcome(for: known) {
            self = outcome
            return
        }
        switch status {
        case 410: self = .tokenInvalid(reason: reasonText)
        case 403: self = .credentialsProblem(reason: reasonText)
        case 429, 500...599: self = .retryable(reason: reasonText)
        default: self = .permanentFailure(reason: reasonText)
        }
    }

    /// nil for `.unknown`: its status decides.
    private static func outcome(for reason: APNsReason) -> DeliveryOutcome? {
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
        case .missingChannelId, .badChannelId, .channelNotRegistered, .cannotCreateChannelConfig:
            // A broadcast's channel (or its configuration) is wrong: that broadcast fails, and no
            // device token is ever blamed for it.
            return .permanentFailure(reason: text)
        case .featureNotEnabled:
            // Broadcast is not enabled on the App ID: every broadcast of the app would fail the
            // same way, so the app is held (as for refused credentials), and only that app.
            return .credentialsProblem(reason: text)
        case .expiredProviderToken:
            return .refreshCredentials(reason: text)
        case .badCertificate, .badCertificateEnvironment, .forbidden, .invalidProviderToken,
             .missingProviderToken, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken:
            return .credentialsProblem(reason: text)
        case .unknown:
            return nil
        }
    }
}
