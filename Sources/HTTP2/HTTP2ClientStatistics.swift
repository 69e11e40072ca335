/// A snapshot of the pool, published by the I/O thread once per loop iteration.
public struct HTTP2ClientStatistics: Sendable, Hashable {
    /// Connections that completed the TLS handshake and are not yet closed (draining included).
    public var openConnections: Int = 0
    /// Connections in DNS, TCP, proxy or TLS set-up.
    public var connecting: Int = 0
    public var streamsInFlight: Int = 0
    /// Streams the pool may have open at once now (`HTTP2Client.streamCapacity`).
    public var streamCapacity: Int = 0
    /// Requests waiting for a stream, including those not yet picked up by the I/O thread.
    public var queuedRequests: Int = 0
    /// Connections that completed the handshake since the client started.
    public var connectionsOpened: Int = 0
    public var goAwaysReceived: Int = 0
    /// Idle-connection PINGs the server acknowledged.
    public var pingsAcknowledged: Int = 0
    /// Requests that received a response (any status).
    public var requestsCompleted: Int = 0

    public init() {}
}
