import PushCore

/// What the OAuth token endpoint's answer means (RFC 6749 §5.1 and §5.2; Google's endpoint sends
/// `{"access_token","expires_in","token_type"}`, or `{"error","error_description"}`).
enum FCMTokenEndpointAnswer: Equatable {
    case token(accessToken: String, lifetime: Duration)
    case failure(FCMAccessTokenError)
    /// Refused because the assertion's `iat`/`exp` are outside the endpoint's window (its clock and
    /// this one disagree): `FCMAssertionClock` may correct it once, else it is this refusal.
    case outOfTimeframe(FCMAccessTokenError)

    /// Google's tokens last an hour; an answer without `expires_in` is taken to last that long.
    static let defaultLifetime: Duration = .seconds(3600)

    init(status: Int, body: [UInt8], clientEmail: String, endpoint: String) {
        let object: [String: JSONValue]? = if case let .object(members)? = try? JSONValue.parse(body) { members } else { nil }
        if status == 200 {
            guard case let .string(token)? = object?["access_token"], !token.isEmpty,
                  token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                self = .failure(FCMAccessTokenError(code: .unavailable, "the token endpoint \(endpoint) answered 200 without a usable access_token"))
                return
            }
            let seconds = object?["expires_in"]?.exactInteger ?? Int(Self.defaultLifetime.components.seconds)
            self = .token(accessToken: token, lifetime: .seconds(max(0, seconds)))
            return
        }
        var said = ""
        let error: String? = if case let .string(error)? = object?["error"] { error } else { nil }
        let description: String? = if case let .string(description)? = object?["error_description"] { description } else { nil }
        if let error { said = " \(error.prefix(80))" }
        if let description { said += ": \(description.prefix(200))" }
        switch status {
        case 400, 401, 403:
            // invalid_grant (a deleted or revoked key, a clock far off), invalid_client, unauthorized_client:
            // only new credentials help, or a clock set right.
            let refusal = FCMAccessTokenError(code: .refused,
                "the token endpoint \(endpoint) refused the service account \(clientEmail) (HTTP \(status)\(said))")
            self = status == 400 && FCMAssertionClock.isTimeframeRefusal(error: error, description: description)
                ? .outOfTimeframe(refusal) : .failure(refusal)
        default:
            self = .failure(FCMAccessTokenError(code: .unavailable, "the token endpoint \(endpoint) answered HTTP \(status)\(said)"))
        }
    }
}

/// Why there is no access token: refused (the service account's key or rights: a person must act),
/// or unavailable (the endpoint could not be reached or failed: try later). `code` is a struct, as
/// `HTTP2Error.Code` is: a new kind need not break callers' switches.
public struct FCMAccessTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The token endpoint refused the service account (invalid_grant, invalid_client, …).
        public static let refused = Code("refused")
        /// No answer from the token endpoint, or one it could not keep (5xx, no token).
        public static let unavailable = Code("unavailable")
    }

    public let code: Code
    public let message: String

    public init(code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
