import APNsCore
import PushCore

/// One connection's provider-token state. The verified token is cached so the hot path compares a
/// string instead of checking an ECDSA signature, and token changes are rate limited like APNs does.
struct ProviderTokenCache {
    /// APNs refuses tokens issued more than an hour ago.
    static let maximumAge = 3600
    /// APNs answers 429 TooManyProviderTokenUpdates when a connection's token changes faster than this.
    static let defaultMinimumUpdateInterval = Duration.seconds(20 * 60)

    let minimumUpdateInterval: Duration
    private var current: (authorization: String, token: VerifiedProviderToken, adoptedAt: ContinuousClock.Instant, jwt: String, teamID: String)?
    private var lastRejected: (authorization: String, reason: APNsReason)?

    init(minimumUpdateInterval: Duration = Self.defaultMinimumUpdateInterval) {
        self.minimumUpdateInterval = minimumUpdateInterval
    }

    /// The JWT (without `bearer `) and team of the token last accepted: what the record keeps.
    /// One string per token and connection, shared by every request that presented it.
    var acceptedToken: (jwt: String, teamID: String)? {
        current.map { ($0.jwt, $0.teamID) }
    }

    /// `authorization` is the raw header value (`bearer <JWT>`); `epochSeconds` is wall-clock now.
    mutating func authenticate(
        authorization: String?,
        keyring: SandboxKeyring,
        now: ContinuousClock.Instant,
        epochSeconds: Int
    ) -> ProviderTokenCheck {
        guard let authorization else { return .rejected(.missingProviderToken) }
        if let current, current.authorization == authorization {
            return Self.isExpired(current.token, epochSeconds) ? .rejected(.expiredProviderToken) : .valid(current.token)
        }
        if let lastRejected, lastRejected.authorization == authorization {
            return .rejected(lastRejected.reason)
        }

        let jwt = authorization.utf8.count > 7 && authorization.prefix(7).lowercased() == "bearer "
            ? authorization.dropFirst(7).drop(while: { $0 == " " }) : ""
        guard !jwt.isEmpty else { return .rejected(.missingProviderToken) }

        switch ProviderTokenVerifier.verify(jwt, keyring: keyring) {
        case .rejected(let reason):
            self.lastRejected = (authorization, reason)
            return .rejected(reason)
        case .valid(let token):
            if Self.isExpired(token, epochSeconds) {
                self.lastRejected = (authorization, .expiredProviderToken)
                return .rejected(.expiredProviderToken)
            }
            // Replacing a still-valid token within 20 minutes is what APNs punishes; not cached as a
            // rejection because the same token becomes acceptable later.
            if let current, !Self.isExpired(current.token, epochSeconds),
               current.adoptedAt.duration(to: now) < self.minimumUpdateInterval {
                return .rejected(.tooManyProviderTokenUpdates)
            }
            self.current = (authorization, token, now, String(jwt), keyring.keys[token.keyID]?.teamID ?? "")
            return .valid(token)
        }
    }

    /// An `iat` so far in the past that the subtraction overflows (Int.min) is as expired as any.
    private static func isExpired(_ token: VerifiedProviderToken, _ epochSeconds: Int) -> Bool {
        let (age, overflow) = epochSeconds.subtractingReportingOverflow(token.issuedAt)
        return overflow || age > Self.maximumAge
    }
}
