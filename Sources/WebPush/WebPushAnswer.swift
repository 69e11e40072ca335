import HTTP2
import PushCore
import PushTransport

/// What a push service's answer to one message means (RFC 8030 §5 and §8, and what the services
/// do beyond it): 201 accepted; 404 and 410 the subscription is gone (FCM's web endpoints answer
/// 404 since 2024, Mozilla, Apple and Microsoft 410); 413 the body is too large; 429 and 5xx try
/// again, after `Retry-After` when given; 401 and 403 (and a 400 about the VAPID token) a refusal
/// of the VAPID token, whose meaning depends on the other answers (`WebPushRefusalJudge`).
/// Anything else is this message's failure.
public enum WebPushAnswer {
    /// A refused VAPID token: the service's status and words, and whether they say the key is not
    /// the one the subscription was made with.
    public struct Refusal: Sendable, Hashable {
        public var status: Int
        public var reason: String
        /// FCM's 403 "the VAPID credentials in the authorization header do not correspond to the
        /// credentials used to create the subscriptions", Mozilla's 401 "VAPID public key mismatch"
        /// (errno 109): the subscription belongs to another key, for good.
        public var keyMismatch: Bool

        public init(status: Int, reason: String, keyMismatch: Bool) {
            self.status = status
            self.reason = reason
            self.keyMismatch = keyMismatch
        }
    }

    public enum Reading: Sendable, Hashable {
        case result(PushResult)
        case refusal(Refusal)
    }

    /// - Parameters:
    ///   - now: UNIX seconds, for a `Retry-After` date.
    ///   - requestedTTL: the `TTL` the request asked for, to read the one the service kept against.
    public static func read(status: Int, headers: [HTTP2Header], body: [UInt8], now: Int, requestedTTL: Int? = nil) -> Reading {
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        let location = header("location")
        let detail = reason(from: body)
        switch status {
        case 200...202:
            return .result(PushResult(status: status, reason: nil, requestID: location, outcome: .sent,
                                      grantedTTL: shortened(ttl: header("ttl"), requested: requestedTTL)))
        case 404, 410:
            let reason = detail ?? (status == 410 ? "Gone" : "NotFound")
            return .result(PushResult(status: status, reason: reason, requestID: location, outcome: .tokenInvalid(reason: reason)))
        case 413:
            let reason = detail ?? "PayloadTooLarge"
            return .result(PushResult(status: status, reason: reason, outcome: .permanentFailure(reason: reason)))
        case 429, 500...599:
            let reason = detail ?? (status == 429 ? "TooManyRequests" : "HTTP \(status)")
            let wait = header("retry-after").flatMap { RetryAfter.delay($0, now: now) }
            return .result(PushResult(status: status, reason: reason, outcome: .retryable(reason: reason), retryAfter: wait))
        case 401, 403:
            let reason = detail ?? (status == 401 ? "Unauthorized" : "Forbidden")
            return .refusal(Refusal(status: status, reason: reason, keyMismatch: isKeyMismatch(reason)))
        case 400 where detail.map(isAboutVAPID) ?? false:
            let reason = detail ?? "BadRequest"
            return .refusal(Refusal(status: status, reason: reason, keyMismatch: isKeyMismatch(reason)))
        default:
            let reason = detail ?? "HTTP \(status)"
            return .result(PushResult(status: status, reason: reason, outcome: .permanentFailure(reason: reason)))
        }
    }

    /// The `TTL` a service answered (RFC 8030 §5.2: a service may keep a message for less than asked
    /// and then says how long), when it is a number of seconds below the one asked for. Anything
    /// else (no header, a longer or equal value, text) says nothing about this message.
    static func shortened(ttl text: String?, requested: Int?) -> Int? {
        guard let requested, let text, text.utf8.count <= 10, let kept = Int(text), kept >= 0, kept < requested else { return nil }
        return kept
    }

    /// The services' words for a subscription made with another key (see `Refusal.keyMismatch`).
    static func isKeyMismatch(_ reason: String) -> Bool {
        let lowered = reason.lowercased()
        return lowered.contains("mismatch") || lowered.contains("do not correspond") || lowered.contains("does not correspond")
    }

    /// A refusal that names the token, the key or `Authorization` is about VAPID (Apple's
    /// BadJwtToken, Mozilla's "Invalid bearer token", FCM's "authorization header").
    static func isAboutVAPID(_ reason: String) -> Bool {
        let lowered = reason.lowercased()
        return ["jwt", "vapid", "authorization", "crypto-key", "bearer"].contains { lowered.contains($0) }
    }

    /// The service's own words, short: Apple's `reason`, Mozilla's `message` (with its `errno`),
    /// else the body's first line when it is text.
    static func reason(from body: [UInt8]) -> String? {
        guard !body.isEmpty else { return nil }
        if case let .object(members)? = try? JSONValue.parse(body) {
            if case let .string(reason)? = members["reason"] { return shortened(reason) }
            if case let .string(message)? = members["message"] {
                let errno = members["errno"]?.exactInteger.map { " (errno \($0))" } ?? ""
                return shortened(message + errno)
            }
            if case let .string(error)? = members["error"] { return shortened(error) }
            return nil
        }
        guard let text = String(validating: body.prefix(512), as: UTF8.self) else { return nil }
        let line = text.prefix { $0 != "\n" && $0 != "\r" }.trimmingPrefix(" ")
        return line.isEmpty ? nil : shortened(String(line))
    }

    private static func shortened(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        return cleaned.utf8.count <= 200 ? cleaned : String(cleaned.prefix(200)) + "…"
    }
}
