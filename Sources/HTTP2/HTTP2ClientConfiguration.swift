public struct HTTP2ClientConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// SNI and the name the certificate must match; defaults to `host`.
    public var serverName: String?
    /// A PEM file of CAs trusted in addition to the system store.
    public var extraCAFile: String?
    public var useSystemCAStore: Bool = true
    public var identity: TLSClientIdentity?
    public var proxy: HTTPProxy?
    /// TCP connect, proxy CONNECT and TLS handshake together.
    public var connectTimeout: Duration = .seconds(10)
    /// A request without a response by then fails with `.timeout`.
    public var requestTimeout: Duration = .seconds(30)
    /// The I/O thread's name (at most 15 bytes are kept), as `top -H` and /proc show it.
    public var threadName = "http2-io"
    /// A connection without traffic for this long is PINGed; no ACK within `requestTimeout` kills it.
    public var idlePingInterval: Duration = .seconds(60)
    /// Connections without a request for this long are closed, keeping `minConnections`.
    public var idleConnectionTimeout: Duration = .seconds(300)
    public var minConnections: Int = 1
    public var maxConnections: Int = 4
    /// Local cap; the effective cap is also bounded by the peer's live SETTINGS_MAX_CONCURRENT_STREAMS.
    public var maxStreamsPerConnection: Int = 1000
    /// At most this many requests start on one connection in any second (nil: no limit). With
    /// every connection at its limit, the pool opens another (up to `maxConnections`) before
    /// requests wait.
    public var maxRequestsPerSecondPerConnection: Int?
    /// Response headers to keep (lowercase names); nil keeps all. Each kept header costs two
    /// Strings per response, so a client that reads one header says which.
    public var keptResponseHeaders: [String]?
    /// What one response may hold: past it the stream is reset (RST_STREAM CANCEL) and the request
    /// fails with `.responseTooLarge`, so a server streaming an endless body or header flood costs
    /// at most this much memory per stream.
    public var responseLimits = HTTP2ResponseLimits()
    /// Connect to public addresses only (`IPAddressScope.global`). Each connection resolves the
    /// host afresh, drops every address that is not public and connects to one that is left, so
    /// no second lookup can swap in another between the check and the connect; SNI, certificate
    /// verification and `:authority` keep the host name. When none is left, requests fail with
    /// `.addressNotAllowed` and nothing is connected. Through a proxy the proxy resolves the name,
    /// so this does not apply (the proxy's own address is the operator's choice). Off by default:
    /// APNs' and FCM's hosts come from the configuration, not from the devices.
    public var onlyGlobalAddresses = false

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    var effectiveServerName: String { serverName ?? host }

    /// `:authority`: the port is omitted when it is the https default.
    var authority: String {
        let name = effectiveServerName
        let bracketed = name.contains(":") ? "[\(name)]" : name
        return port == 443 ? bracketed : "\(bracketed):\(port)"
    }

    /// Limits clamped to values the pool can work with.
    var normalized: HTTP2ClientConfiguration {
        var copy = self
        copy.maxConnections = max(1, maxConnections)
        copy.minConnections = max(0, min(minConnections, copy.maxConnections))
        copy.maxStreamsPerConnection = max(1, maxStreamsPerConnection)
        return copy
    }
}
