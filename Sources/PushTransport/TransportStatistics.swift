/// A snapshot of one app's connections to its platform, whatever carries them: for the metrics
/// (`pushworker_connections`, streams in flight and their capacity, GOAWAYs) and `/status`.
public struct TransportStatistics: Sendable, Hashable {
    /// Connections set up and not yet closed (draining included).
    public var openConnections = 0
    /// Connections being set up (DNS, TCP, proxy, TLS).
    public var connecting = 0
    public var streamsInFlight = 0
    /// Requests the connections may have in flight at once now.
    public var streamCapacity = 0
    /// Requests waiting for a connection to take them.
    public var queuedRequests = 0
    /// Connections set up since the transport started.
    public var connectionsOpened = 0
    public var goAwaysReceived = 0
    /// Idle-connection PINGs the server acknowledged.
    public var pingsAcknowledged = 0
    /// Requests that received a response (any status).
    public var requestsCompleted = 0

    public init() {}
}
