#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// Makes the `Authorization: vapid t=<jwt>, k=<key>` header (RFC 8292 §3) for any endpoint, and keeps
/// one token per origin until it has less than an hour left, so a busy origin costs one ECDSA
/// signature every 11 hours. Thread-safe.
public final class VAPIDTokenCache: Sendable {
    /// The wall clock that `exp` counts from; injectable so tests check renewal without waiting.
    public struct Clock: Sendable {
        public var unixSeconds: @Sendable () -> Int

        public static let system = Clock(unixSeconds: { Int(time(nil)) })

        public init(unixSeconds: @escaping @Sendable () -> Int) {
            self.unixSeconds = unixSeconds
        }
    }

    /// 12 hours, as web-push libraries do: Apple refuses a token whose `exp` is more than 24 hours
    /// ahead, and half of that leaves room for a sender's clock running fast.
    public static let tokenLifetime = 12 * 3600
    /// A token is replaced once it has less than this left, so one never expires in flight or
    /// while a request waits for a connection.
    public static let renewalMargin = 3600
    /// Endpoints come from subscribers, so their origins are not ours to bound: past this many,
    /// the tokens nearest expiry are dropped.
    public static let maximumOrigins = 256

    public let key: VAPIDKey
    public let subject: VAPIDSubject
    private let clock: Clock
    private let tokens = NIOLockedValueBox<[WebPushEndpointOrigin: VAPIDToken]>([:])
    /// `, k=<public key>`: the same for every header.
    private let keyParameter: String

    public init(key: VAPIDKey, subject: VAPIDSubject, clock: Clock = .system) {
        self.key = key
        self.subject = subject
        self.clock = clock
        self.keyParameter = ", k=" + key.publicKeyBase64URL
    }

    /// The `Authorization` header value for a request to `endpoint`.
    public func authorizationHeader(forEndpoint endpoint: String) throws(WebPushError) -> String {
        try authorizationHeader(for: WebPushEndpointOrigin(endpoint: endpoint))
    }

    public func authorizationHeader(for origin: WebPushEndpointOrigin) throws(WebPushError) -> String {
        let now = clock.unixSeconds()
        if let cached = tokens.withLockedValue({ $0[origin] }), cached.expiresAt - now >= Self.renewalMargin {
            return "vapid t=" + cached.jwt + keyParameter
        }
        // Signed outside the lock: two callers that both missed make two valid tokens, and the
        // later-expiring one stays; push services accept any valid token, unlike APNs.
        let token = try VAPIDToken(audience: origin, expiresAt: now + Self.tokenLifetime, subject: subject, key: key)
        tokens.withLockedValue { tokens in
            if let existing = tokens[origin], existing.expiresAt >= token.expiresAt { return }
            if tokens[origin] == nil, tokens.count >= Self.maximumOrigins { Self.evict(from: &tokens, now: now) }
            tokens[origin] = token
        }
        return "vapid t=" + token.jwt + keyParameter
    }

    /// How many origins have a token kept, for tests of the bound.
    var cachedOriginCount: Int { tokens.withLockedValue { $0.count } }

    /// Drops the tokens due for renewal; if that frees nothing, the one nearest expiry.
    private static func evict(from tokens: inout [WebPushEndpointOrigin: VAPIDToken], now: Int) {
        tokens = tokens.filter { $0.value.expiresAt - now >= renewalMargin }
        if tokens.count >= maximumOrigins, let soonest = tokens.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
            tokens[soonest.key] = nil
        }
    }
}
