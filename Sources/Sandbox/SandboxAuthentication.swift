import APNsCore

/// Who sent a request, checked alike for device pushes, broadcasts and channel management: a
/// client certificate for the app, or a provider token (JWT) from the connection's cache.
struct SandboxAuthentication {
    /// What the record keeps: `"token:<kid>"`, `"certificate:<bundle ID>"`, or `"none"`.
    var label = "none"
    /// Why the request is refused, or nil when it may go on.
    var rejection: APNsReason?
    /// A provider token checked out (the first one lifts a connection's stream limit).
    var tokenAuthenticated = false

    /// `certificateCovers` says whether a certificate for the given bundle ID may send this request;
    /// when it may not, the answer is APNs' `TopicDisallowed`.
    static func check(
        identity: SandboxClientIdentity,
        authorization: String?,
        certificateCovers: (String) -> Bool,
        keyring: SandboxKeyring,
        tokens: inout ProviderTokenCache,
        now: ContinuousClock.Instant,
        epochSeconds: Int
    ) -> SandboxAuthentication {
        var result = SandboxAuthentication()
        switch identity {
        case .certificate(let bundleID):
            result.label = "certificate:\(bundleID)"
            if !certificateCovers(bundleID) { result.rejection = .topicDisallowed }
        case .unusableCertificate:
            result.rejection = .badCertificate
        case .none:
            switch tokens.authenticate(authorization: authorization, keyring: keyring, now: now, epochSeconds: epochSeconds) {
            case .rejected(let reason):
                result.rejection = reason
            case .valid(let verified):
                result.label = "token:\(verified.keyID)"
                result.tokenAuthenticated = true
            }
        }
        return result
    }
}
