/// How to reach the broker and how the connection behaves.
public struct AMQPConfiguration: Sendable {
    /// `amqp://user:pass@host:port/vhost` or `amqps://…` (TLS). Parts are percent-decoded;
    /// an empty path or `/` means vhost `/`, and `%2f` spells `/` inside a vhost. Several nodes of
    /// a cluster are separated by commas (`AMQPEndpoint.list(parsing:)`): the client connects to
    /// one of them and fails over to the next (`EndpointRotation`).
    public var url: String
    /// PEM bundle used to verify the broker for `amqps://`; the system bundle when nil.
    public var caFile: String?
    /// Heartbeat interval in seconds (0 disables); the broker may lower it.
    public var heartbeat: Int
    /// Shown in the management UI (`connection_name` client property).
    public var connectionName: String
    /// Bounds the TCP/TLS connect, the login handshake and every synchronous RPC.
    public var connectTimeout: Duration
    /// Reconnect backoff: starts at the lower bound, doubles per failed attempt up to the upper bound, with jitter.
    public var reconnectDelay: ClosedRange<Duration>

    public init(url: String) {
        self.url = url
        self.caFile = nil
        self.heartbeat = 30
        self.connectionName = "pushworker"
        self.connectTimeout = .seconds(10)
        // Capped at 2 s: a worker resumes within ~2 s of the broker's return (ops/faults measured
        // 7.0 s after a 7 s restart with a 30 s cap); an attempt every 1–2 s per worker is cheap.
        self.reconnectDelay = .milliseconds(200) ... .seconds(2)
    }

    /// The nodes `url` names, in the order written, or `.invalidURL` saying what is wrong with it.
    public func endpoints() throws(AMQPError) -> [AMQPEndpoint] {
        try AMQPEndpoint.list(parsing: url)
    }

    /// The first node `url` names.
    public func endpoint() throws(AMQPError) -> AMQPEndpoint {
        try endpoints()[0]
    }
}
