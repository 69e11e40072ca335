/// A push service as `WebPushRefusalJudge` counts it: one host (`fcm.googleapis.com`), or every
/// host of a domain (`*.notify.windows.com`: Microsoft gives each region a host of its own), on
/// port 443 unless the name gives one (`push.example:8443`, `[::1]:8443`).
public struct WebPushServiceName: Sendable, Hashable, CustomStringConvertible {
    /// As given, lowercase.
    public let description: String
    private let host: String
    private let anySubdomain: Bool
    private let port: Int

    /// The four services browsers subscribe at: Chrome's, Firefox's, Safari's and Edge's.
    public static let wellKnown: [WebPushServiceName] = [
        "fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com", "*.notify.windows.com",
    ].compactMap(WebPushServiceName.init)

    /// nil for text that is not `host`, `*.domain` or either with `:port`.
    public init?(_ text: String) {
        let lowered = text.lowercased()
        var host = Substring(lowered)
        var port = 443
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let given = Int(rest.dropFirst()) else { return nil }
                port = given
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let given = Int(host[host.index(after: colon)...]) else { return nil }
            port = given
            host = host[..<colon]
        }
        guard (1...65535).contains(port), !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        anySubdomain = host.hasPrefix("*.")
        self.host = anySubdomain ? String(host.dropFirst()) : String(host)   // `*.x.com` keeps `.x.com`
        guard !anySubdomain || self.host.count > 1 else { return nil }
        self.port = port
        description = lowered
    }

    public func matches(_ origin: WebPushEndpointOrigin) -> Bool {
        guard origin.port == port else { return false }
        return anySubdomain ? origin.host.hasSuffix(host) : origin.host == host
    }
}
