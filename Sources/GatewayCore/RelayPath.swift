import PushCore

/// The request path toot-relay's README gives subscribers: `/relay-to/<environment>/<device-token>[/<extra>]`.
///
/// Percent-decoding: each segment is decoded (RFC 3986 §2.1) after the path is split on "/", so
/// `%2F` inside the extra part reaches the client as a slash within its segment and a token may be
/// spelled with escapes. The extra part is the decoded segments after the token joined with "/";
/// empty (a trailing slash) counts as none. It is written into the payload as it is, so it must be
/// UTF-8 of at most `WebPushRelay.maxExtraBytes` bytes with nothing JSON escapes (control
/// characters, `"`, `\`): its size in the payload is then its size here.
struct RelayPath {
    static let prefix = "/relay-to/"
    static let shape = "/relay-to/<development|production>/<device-token>[/<extra>]"

    let environment: RelayEnvironment
    let token: DeviceToken
    let extra: String?

    /// - Parameter path: the request target's path as received (still percent-encoded); a query
    ///   or fragment after it is ignored.
    init(_ path: String) throws(RelayRefusal) {
        guard let segments = Self.segments(path) else {
            throw RelayRefusal(status: 404, "not a relay path: expected \(Self.shape)")
        }
        guard let environment = Self.environment(segments) else {
            throw RelayRefusal(status: 404, "unknown environment \(JobParser.rendered(.string(String(segments[0])))) in the path: expected development or production (\(Self.shape))")
        }
        guard segments.count >= 2 else {
            throw RelayRefusal(status: 404, "the path names no device token: expected \(Self.shape)")
        }
        guard let tokenText = PercentDecoding.decode(segments[1]) else {
            throw .badRequest("path segment <device-token>: invalid percent-encoding")
        }
        let token: DeviceToken
        do { token = try DeviceToken(validating: tokenText) } catch {
            throw .badRequest("path segment <device-token>: \(error.description)")
        }
        self.environment = environment
        self.token = token
        self.extra = try Self.extra(segments.dropFirst(2))
    }

    /// The environment a path names, read before anything else of the request (the gateway's
    /// limits are per environment's app); nil when `init` would refuse it with 404.
    static func environment(of path: String) -> RelayEnvironment? {
        segments(path).flatMap(environment)
    }

    /// The segments after the prefix, still percent-encoded; nil when the path lacks the prefix.
    private static func segments(_ path: String) -> [Substring]? {
        let withoutQuery = path.prefix { $0 != "?" && $0 != "#" }
        guard withoutQuery.hasPrefix(prefix) else { return nil }
        return withoutQuery.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
    }

    private static func environment(_ segments: [Substring]) -> RelayEnvironment? {
        PercentDecoding.decode(segments[0]).flatMap(RelayEnvironment.init(rawValue:))
    }

    private static func extra(_ segments: ArraySlice<Substring>) throws(RelayRefusal) -> String? {
        guard !segments.isEmpty else { return nil }
        var decoded = [String]()
        for segment in segments {
            guard let text = PercentDecoding.decode(segment) else {
                throw .badRequest("path segment <extra>: invalid percent-encoding (or not UTF-8)")
            }
            decoded.append(text)
        }
        let extra = decoded.joined(separator: "/")
        guard !extra.isEmpty else { return nil }
        guard extra.utf8.count <= WebPushRelay.maxExtraBytes else {
            throw .badRequest("path segment <extra>: is \(extra.utf8.count) bytes after percent-decoding; at most \(WebPushRelay.maxExtraBytes) are relayed")
        }
        if let offset = extra.utf8.firstIndex(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            let byte = extra.utf8[offset]
            let position = extra.utf8.distance(from: extra.utf8.startIndex, to: offset)
            let what = byte == UInt8(ascii: "\"") ? "'\"'" : byte == UInt8(ascii: "\\") ? "'\\'" : "a control character"
            throw .badRequest("path segment <extra>: contains \(what) at byte \(position) after percent-decoding; the extra part may not hold control characters, '\"' or '\\'")
        }
        return extra
    }
}
