/// The origin (RFC 6454 §6.2) of a subscription's endpoint: `scheme://host[:port]`, lowercase,
/// the port only when it is not the scheme's default. It is the VAPID `aud` claim (RFC 8292 §2)
/// and the key of the token cache, so `https://Push.example:443/a` and `https://push.example/b` share
/// one token.
public struct WebPushEndpointOrigin: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    /// The host to connect to: lowercase, an IPv6 address without its brackets.
    public let host: String
    public let port: Int

    /// - Parameter endpoint: the subscription's `endpoint` URL, `https:` (or `http:` for a local
    ///   test service). Its path and query (WNS endpoints have one) are not part of the origin.
    public init(endpoint: String) throws(WebPushError) {
        func refuse(_ problem: String) -> WebPushError {
            WebPushError(.invalidEndpoint, field: "endpoint", problem)
        }
        guard let separator = endpoint.firstRange(of: "://") else { throw refuse("is not an absolute URL") }
        let scheme = endpoint[..<separator.lowerBound].lowercased()
        let defaultPort: Int
        switch scheme {
        case "https": defaultPort = 443
        case "http": defaultPort = 80
        default: throw refuse("must be an https: URL")
        }
        let authority = endpoint[separator.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { throw refuse("must not carry user information") }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("has an unterminated IPv6 address") }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw refuse("has text after its IPv6 address") }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { throw refuse("needs an ASCII host name") }
        var origin = scheme + "://" + host.lowercased()
        var port = defaultPort
        if let portText {
            guard let given = Int(portText), (1...65535).contains(given) else { throw refuse("has a port that is not 1 to 65535") }
            port = given
            if port != defaultPort { origin += ":\(port)" }
        }
        value = origin
        let name = host.lowercased()
        self.host = name.hasPrefix("[") ? String(name.dropFirst().dropLast()) : name
        self.port = port
    }

    public var description: String { value }

    /// The endpoint's path and query, the request's `:path` ("/" when it has none).
    public static func path(of endpoint: String) -> String {
        guard let separator = endpoint.firstRange(of: "://") else { return "/" }
        let afterAuthority = endpoint[separator.upperBound...].drop { $0 != "/" && $0 != "?" && $0 != "#" }
        let rest = afterAuthority.prefix { $0 != "#" }
        return rest.isEmpty ? "/" : (rest.hasPrefix("?") ? "/" + rest : String(rest))
    }
}
