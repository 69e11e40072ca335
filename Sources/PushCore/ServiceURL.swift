/// `scheme://[user[:password]@]host[:port][/path]`: the one URL shape every connection option
/// uses (`amqp[s]://` for RabbitMQ, `redis://`, `https://` for `--apns-url`, `http://` for
/// `--apns-proxy`), read by one parser. Percent-decoding is strict (a bad `%xx` or a result that is
/// not UTF-8 is an error), IPv6 hosts are written in brackets, and an error never repeats the URL:
/// it may hold a password.
public struct ServiceURL: Sendable, Hashable {
    public var scheme: String
    /// Nil when the URL has no `user@` part; "" for `:password@`.
    public var user: String?
    /// Nil when the user info has no `:`.
    public var password: String?
    /// "" when the URL names none (`redis://`).
    public var host: String
    public var port: Int?
    /// What follows the first `/` after the authority, still percent-encoded ("" when absent):
    /// an AMQP vhost and a Redis database number read it differently.
    public var rawPath: String

    public init(parsing text: String, schemes: [String]) throws(ServiceURLError) {
        guard let separator = text.utf8.firstIndex(of: UInt8(ascii: ":")), text[separator...].hasPrefix("://"),
              schemes.contains(String(text[..<separator])) else {
            throw ServiceURLError("the scheme must be \(schemes.map { "\($0)://" }.joined(separator: " or "))")
        }
        scheme = String(text[..<separator])
        var rest = text[text.index(separator, offsetBy: 3)...]
        if rest.contains("?") || rest.contains("#") {
            throw ServiceURLError("query parameters and fragments are not supported")
        }
        rawPath = ""
        if let slash = rest.firstIndex(of: "/") {
            rawPath = String(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        user = nil
        password = nil
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.percentDecoded(userInfo[..<colon], part: "user")
                password = try Self.percentDecoded(userInfo[userInfo.index(after: colon)...], part: "password")
            } else {
                user = try Self.percentDecoded(userInfo, part: "user")
            }
        }
        var hostText = rest
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw ServiceURLError("unterminated IPv6 address") }
            hostText = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ServiceURLError("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            hostText = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        host = try Self.percentDecoded(hostText, part: "host")
        port = nil
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw ServiceURLError("the port must be a number from 1 to 65535")
            }
            port = value
        }
    }

    /// Percent-decodes one part of a URL; `part` names it in the error.
    public static func percentDecoded(_ text: some StringProtocol, part: String) throws(ServiceURLError) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let high = Hex.value(utf8.removeFirst()), let low = Hex.value(utf8.removeFirst()) else {
                throw ServiceURLError("bad percent-encoding in the \(part)")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw ServiceURLError("the \(part) is not UTF-8 after percent-decoding")
        }
        return decoded
    }
}

/// What is wrong with a URL, without the URL.
public struct ServiceURLError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
