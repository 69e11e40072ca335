import PushCore

/// A push platform's answer for one device, or what the transport made of its absence.
public struct PushResult: Sendable, Hashable {
    /// The HTTP status, or 0 when no answer came back (connection lost, timeout, refused).
    public var status: Int
    /// The platform's reason code (APNs `reason`, FCM `errorCode`, a Web Push status text).
    public var reason: String?
    /// When the token stopped being valid, in milliseconds since 1970 (APNs' 410).
    public var timestamp: Int?
    /// The request's id: the one sent (APNs' `apns-id`) or the one the platform gave the message
    /// (FCM's message `name`, Web Push's `Location`).
    public var requestID: String?
    public var outcome: DeliveryOutcome
    /// How long the platform asked us to wait before trying this device again (`Retry-After` on a
    /// 429 or 503 of FCM and Web Push services): a retry waits at least this long.
    public var retryAfter: Duration?
    /// The seconds the platform keeps an accepted message for, where it kept it for less than asked
    /// (a Web Push service may shorten the `TTL` and says so in its answer): nil otherwise.
    public var grantedTTL: Int?

    public init(status: Int, reason: String?, timestamp: Int? = nil, requestID: String? = nil, outcome: DeliveryOutcome,
                retryAfter: Duration? = nil, grantedTTL: Int? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.requestID = requestID
        self.outcome = outcome
        self.retryAfter = retryAfter
        self.grantedTTL = grantedTTL
    }

    /// Whether the platform asked for new credentials (an expired token the provider signs).
    public var asksForNewCredentials: Bool {
        if case .refreshCredentials = outcome { true } else { false }
    }
}
