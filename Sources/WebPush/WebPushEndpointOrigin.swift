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
    ///
    /// Read as UTF-8 bytes, never as Characters: it runs for every message, and grapheme breaking
    /// over the endpoint showed in a Web Push message's CPU (measured:
    /// docs/evidence/code-measurements.md#web-push-endpoint-origin).
    public init(endpoint: String) throws(WebPushError) {
        func refuse(_ problem: String) -> WebPushError {
            WebPushError(.invalidEndpoint, field: "endpoint", problem)
        }
        let bytes = Array(endpoint.utf8)
        guard let separator = Self.schemeSeparator(in: bytes) else { throw refuse("is not an absolute URL") }
        let defaultPort: Int
        switch String(decoding: bytes[..<separator], as: UTF8.self).lowercased() {
        case "https": defaultPort = 443
        case "http": defaultPort = 80
        default: throw refuse("must be an https: URL")
        }
        let authority = bytes[(separator + 3)...].prefix { !Self.endsAuthority($0) }
        guard !authority.contains(UInt8(ascii: "@")) else { throw refuse("must not carry user information") }
        var host: ArraySlice<UInt8>
        var portText: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { throw refuse("has an unterminated IPv6 address") }
            host = authority[...close]
            let rest = authority[(close + 1)...]
            if !rest.isEmpty {
                guard rest.first == UInt8(ascii: ":") else { throw refuse("has text after its IPv6 address") }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
            host = authority[..<colon]
            portText = authority[(colon + 1)...]
        } else {
            host = authority
        }
        guard !host.isEmpty, host.allSatisfy({ $0 < 0x80 && $0 != 0x20 && !(0x09...0x0D).contains($0) }) else {
            throw refuse("needs an ASCII host name")
        }
        let name = String(decoding: host.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        var origin = (defaultPort == 443 ? "https://" : "http://") + name
        var port = defaultPort
        if let portText {
            guard let given = Int(String(decoding: portText, as: UTF8.self)), (1...65535).contains(given) else {
                throw refuse("has a port that is not 1 to 65535")
            }
            port = given
            if port != defaultPort { origin += ":\(port)" }
        }
        value = origin
        self.host = name.utf8.first == UInt8(ascii: "[") ? String(name.dropFirst().dropLast()) : name
        self.port = port
    }

    public var description: String { value }

    /// The endpoint's path and query, the request's `:path` ("/" when it has none).
    public static func path(of endpoint: String) -> String {
        let bytes = Array(endpoint.utf8)
        guard let separator = schemeSeparator(in: bytes) else { return "/" }
        let afterAuthority = bytes[(separator + 3)...].drop { !endsAuthority($0) }
        let rest = afterAuthority.prefix { $0 != UInt8(ascii: "#") }
        if rest.isEmpty { return "/" }
        let text = String(decoding: rest, as: UTF8.self)
        return rest.first == UInt8(ascii: "?") ? "/" + text : text
    }

    /// Where "://" starts.
    private static func schemeSeparator(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 3 else { return nil }
        return (0...(bytes.count - 3)).first {
            bytes[$0] == UInt8(ascii: ":") && bytes[$0 + 1] == UInt8(ascii: "/") && bytes[$0 + 2] == UInt8(ascii: "/")
        }
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }
}
