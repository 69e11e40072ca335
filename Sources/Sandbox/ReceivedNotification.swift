/// One request the sandbox answered, accepted or not, as the client sent it.
public struct ReceivedNotification: Sendable, Hashable {
    /// Lowercase hex device token from `:path` (empty when the path had none, and for broadcasts).
    public let token: String
    /// `apns-topic`; for a broadcast, the bundle ID of its path.
    public let topic: String
    public let pushType: String
    public let priority: Int
    public let expiration: Int?
    public let collapseID: String?
    /// The `apns-id` answered (for a broadcast, its `apns-request-id`): the request's (lowercased) or a generated one.
    public let apnsID: String
    public let payload: [UInt8]
    /// `"token:<kid>"`, `"certificate:<topic>"`, or `"none"` when authentication failed.
    public let authentication: String
    public let status: Int
    public let reason: String?
    public let connectionID: Int
    public let receivedAt: ContinuousClock.Instant
    /// Wall-clock milliseconds since 1970 when it was admitted: what the fault suite measures
    /// recovery with (its own clock is the same machine's).
    public var receivedAtMilliseconds: Int64 = 0
    /// The provider token (JWT, without `bearer `) the request was accepted with; nil for
    /// certificate connections and requests whose token was refused.
    public var providerToken: String?
    /// The team of `providerToken`'s key.
    public var teamID: String?
    /// A broadcast's `apns-channel-id` as sent ("" when it sent none); nil for a device push.
    public var channelID: String?
}
