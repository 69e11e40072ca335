import HTTP2

/// How one app reaches APNs: where, with which credentials, and for which bundle ID.
public struct APNsConfiguration: Sendable {
    public enum Environment: String, Sendable, CaseIterable {
        case production, development

        public var host: String {
            switch self {
            case .production: "api.push.apple.com"
            case .development: "api.sandbox.push.apple.com"
            }
        }
    }

    public enum Credentials: Sendable {
        /// `.p8` key, Key ID and Team ID (token-based connection).
        case token(APNsTokenProvider)
        /// TLS client certificate (certificate-based connection).
        case certificate(TLSClientIdentity)
    }

    public var environment: Environment
    /// Replaces the environment's host and port, e.g. `https://127.0.0.1:2197` for the sandbox.
    public var url: String?
    /// 443 or 2197 (same service; 2197 lets firewalls tell APNs from other HTTPS).
    public var port: Int
    public var credentials: Credentials
    /// The app's bundle ID; the push type's suffix is added per notification.
    public var topic: String?
    public var extraCAFile: String?
    public var proxy: HTTPProxy?
    public var maxConnections: Int = 4
    public var requestTimeout: Duration = .seconds(30)
    public var connectTimeout: Duration = .seconds(10)

    public init(environment: Environment = .production, url: String? = nil, port: Int = 443, credentials: Credentials, topic: String?) {
        self.environment = environment
        self.url = url
        self.port = port
        self.credentials = credentials
        self.topic = topic
    }

    /// Host and port the connections go to.
    public func endpoint() throws(APNsConfigurationError) -> (host: String, port: Int) {
        guard let url else { return (environment.host, port) }
        guard url.hasPrefix("https://") else {
            throw APNsConfigurationError("apns-url must start with https:// (APNs is HTTP/2 over TLS), got \"\(url)\"")
        }
        var authority = Substring(url.dropFirst("https://".count))
        if let slash = authority.firstIndex(of: "/") { authority = authority[..<slash] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":"), let port = rest.isEmpty ? 443 : Int(rest.dropFirst()) else {
                throw APNsConfigurationError("apns-url has a bad port: \"\(url)\"")
            }
            return (host, port)
        }
        if let colon = authority.lastIndex(of: ":") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else {
                throw APNsConfigurationError("apns-url has a bad port: \"\(url)\"")
            }
            return (String(authority[..<colon]), port)
        }
        guard !authority.isEmpty else { throw APNsConfigurationError("apns-url has no host: \"\(url)\"") }
        return (String(authority), 443)
    }
}
