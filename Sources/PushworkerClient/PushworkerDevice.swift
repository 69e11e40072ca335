import PushCore

/// One element of a job's `tokens`. What a token is depends on the app's platform: an APNs
/// device token (hex), an FCM registration token, or a Web Push subscription in its compact
/// form `<endpoint>#p256dh=<base64url>&auth=<base64url>` (or its JSON text).
public enum PushworkerDevice: Sendable, Hashable, ExpressibleByStringLiteral {
    case token(String)
    /// A browser's `PushSubscription.toJSON()`: written as `{"endpoint":…,"keys":{"p256dh":…,"auth":…}}`.
    case subscription(endpoint: String, p256dh: String, auth: String)

    public init(stringLiteral value: String) {
        self = .token(value)
    }

    /// The compact form the worker's events name a subscription by (a token is itself).
    public var given: String {
        switch self {
        case .token(let text): text
        case .subscription(let endpoint, let p256dh, let auth): "\(endpoint)#p256dh=\(p256dh)&auth=\(auth)"
        }
    }

    var json: JSONValue {
        switch self {
        case .token(let text): .string(text)
        case .subscription(let endpoint, let p256dh, let auth):
            .object(["endpoint": .string(endpoint), "keys": .object(["p256dh": .string(p256dh), "auth": .string(auth)])])
        }
    }
}
