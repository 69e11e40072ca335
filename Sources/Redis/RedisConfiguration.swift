/// Where Redis is and how long to wait for it. `redis://[[user]:password@]host[:port][/db]`.
public struct RedisConfiguration: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: Int
    public var connectTimeout: Duration = .seconds(5)
    public var commandTimeout: Duration = .seconds(5)

    public init(url: String) throws(RedisError) {
        guard url.hasPrefix("redis://") else {
            // Only the scheme is named: the rest of a URL can hold a password.
            let scheme = url.utf8.firstIndex(of: UInt8(ascii: ":")).flatMap { colon in
                url[colon...].hasPrefix("://") ? String(url[..<colon].prefix(16)) : nil
            }
            let got = scheme.map { "\"\($0)://\"" } ?? "no scheme"
            let tls = scheme == "rediss" ? "; TLS to Redis (rediss://) needs hiredis 1.x, which Debian 12 lacks: reach a TLS-only Redis through a local TLS tunnel (stunnel, spiped)" : ""
            throw RedisError(.invalidURL, "redis URL must start with redis:// (got \(got))\(tls)")
        }
        var rest = Substring(url.dropFirst("redis://".count))
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = credentials[..<colon]
                username = user.isEmpty ? nil : Self.percentDecoded(user)
                password = Self.percentDecoded(credentials[credentials.index(after: colon)...])
            } else {
                password = Self.percentDecoded(credentials)
            }
        }
        var hostPart = rest
        port = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let parsed = Int(rest[rest.index(after: colon)...]), (1...65535).contains(parsed) else {
                throw RedisError(.invalidURL, "redis URL port must be 1–65535")
            }
            port = parsed
            hostPart = rest[..<colon]
        }
        host = hostPart.isEmpty ? "127.0.0.1" : String(hostPart.trimmingCharacters(in: "[]"))
        if path.isEmpty {
            database = 0
        } else {
            guard let db = Int(path), db >= 0 else { throw RedisError(.invalidURL, "redis URL path must be a database number, got \"\(path)\"") }
            database = db
        }
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes = [UInt8]()
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var result = self
        while let first = result.first, set.contains(first) { result = result.dropFirst() }
        while let last = result.last, set.contains(last) { result = result.dropLast() }
        return result
    }
}
