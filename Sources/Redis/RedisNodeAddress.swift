/// One Redis server (a data node, a sentinel or a cluster node) by host and port, as Redis itself
/// writes it in `MOVED`/`ASK` errors and `CLUSTER SLOTS`: `host:port`, the port after the last
/// colon (so an IPv6 host such as `::1:7000` reads as `::1` and 7000).
public struct RedisNodeAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`; nil when there is no port. An empty host stays empty: the cluster spec lets a
    /// node leave it out to mean "the host you asked", which only the caller knows.
    public init?(parsing text: some StringProtocol) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        self.host = String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
