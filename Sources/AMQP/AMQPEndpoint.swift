/// The parsed parts of an AMQP URL.
public struct AMQPEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String
    public var vhost: String
    public var tls: Bool

    public init(host: String, port: Int, user: String, password: String, vhost: String, tls: Bool) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.vhost = vhost
        self.tls = tls
    }

    /// Safe for logs: the password is left out.
    public var description: String {
        "\(tls ? "amqps" : "amqp")://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port) vhost=\(vhost)"
    }
}

extension AMQPEndpoint {
    /// Parses `amqp[s]://[user[:password]@]host[:port][/vhost]` (RabbitMQ URI spec, no query options).
    init(parsing url: String) throws(AMQPError) {
        func invalid(_ why: String) -> AMQPError {
            // The URL itself is not echoed: it may contain a password.
            AMQPError(code: .invalidURL, message: "invalid AMQP URL: \(why)")
        }
        let tls: Bool
        var rest: Substring
        if url.hasPrefix("amqp://") {
            tls = false
            rest = url.dropFirst("amqp://".count)
        } else if url.hasPrefix("amqps://") {
            tls = true
            rest = url.dropFirst("amqps://".count)
        } else {
            throw invalid("scheme must be amqp:// or amqps://")
        }
        if rest.contains("?") || rest.contains("#") {
            throw invalid("query parameters and fragments are not supported; use AMQPConfiguration fields")
        }

        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }

        var user = "guest"
        var password = "guest"
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.percentDecoded(userInfo[..<colon], part: "user", invalid)
                password = try Self.percentDecoded(userInfo[userInfo.index(after: colon)...], part: "password", invalid)
            } else {
                user = try Self.percentDecoded(userInfo, part: "user", invalid)
                password = ""
            }
        }

        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            // IPv6 literal: [::1]:5672
            guard let close = rest.firstIndex(of: "]") else { throw invalid("unterminated IPv6 address") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        let decodedHost = try Self.percentDecoded(host, part: "host", invalid)
        guard !decodedHost.isEmpty else { throw invalid("missing host") }

        var port = tls ? 5671 : 5672
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw invalid("port must be a number from 1 to 65535")
            }
            port = value
        }

        var vhost = "/"
        if !path.isEmpty {
            guard !path.contains("/") else { throw invalid("vhost contains '/'; write it as %2f") }
            vhost = try Self.percentDecoded(path, part: "vhost", invalid)
        }

        self.init(host: decodedHost, port: port, user: user, password: password, vhost: vhost, tls: tls)
    }

    private static func percentDecoded(
        _ text: Substring, part: String, _ invalid: (String) -> AMQPError
    ) throws(AMQPError) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2,
                  let high = hexValue(utf8.removeFirst()), let low = hexValue(utf8.removeFirst())
            else { throw invalid("bad percent-encoding in \(part)") }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw invalid("\(part) is not UTF-8 after percent-decoding")
        }
        return decoded
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
