import PushCore
import WebPushCore

/// A subscription's keys as the browser gives them (`PushSubscription.toJSON().keys`), checked:
/// `p256dh` is a point on P-256 and `auth` is 16 bytes (RFC 8291 §3.1–3.2). A value of this type
/// is always usable for encryption, so a bad subscription is refused when the job arrives.
public struct WebPushSubscriptionKeys: Sendable {
    /// The user agent's public key: 0x04 ‖ X ‖ Y.
    public let p256dh: [UInt8]
    /// The authentication secret.
    public let auth: [UInt8]
    /// `p256dh` imported once, here, for every message to this subscription.
    let userAgentKey: P256Point

    public static let p256dhLength = 65
    public static let authLength = 16

    public init(p256dh: [UInt8], auth: [UInt8]) throws(WebPushError) {
        guard p256dh.count == Self.p256dhLength else {
            throw WebPushError(.invalidSubscriptionKey, field: "keys.p256dh",
                               "must be an uncompressed P-256 point of 65 bytes, got \(p256dh.count) bytes")
        }
        guard p256dh[0] == 0x04 else {
            throw WebPushError(.invalidSubscriptionKey, field: "keys.p256dh",
                               "must be an uncompressed P-256 point (first byte 0x04), got first byte \(p256dh[0])")
        }
        guard auth.count == Self.authLength else {
            throw WebPushError(.invalidSubscriptionKey, field: "keys.auth", "must be 16 bytes, got \(auth.count)")
        }
        guard let key = try P256Point.importing(uncompressed: p256dh) else {
            throw WebPushError(.invalidSubscriptionKey, field: "keys.p256dh", "is not a point on the P-256 curve")
        }
        self.p256dh = p256dh
        self.auth = auth
        self.userAgentKey = key
    }

    /// A subscription's keys, whose lengths `WebPushSubscription` checked: left is the curve.
    public init(_ subscription: WebPushSubscription) throws(WebPushError) {
        try self.init(p256dh: subscription.p256dh, auth: subscription.auth)
    }

    /// From the base64url text a browser's subscription JSON holds (padding is tolerated).
    public init(p256dh p256dhText: String, auth authText: String) throws(WebPushError) {
        guard let p256dh = Base64.decode(p256dhText) else {
            throw WebPushError(.invalidSubscriptionKey, field: "keys.p256dh", "is not base64url")
        }
        guard let auth = Base64.decode(authText) else {
            throw WebPushError(.invalidSubscriptionKey, field: "keys.auth", "is not base64url")
        }
        try self.init(p256dh: p256dh, auth: auth)
    }
}
