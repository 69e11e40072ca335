import HTTP2
import PushTransport

extension TransportStatistics {
    /// An HTTP/2 client's pool, in the transport's terms.
    public init(_ http2: HTTP2ClientStatistics) {
        self.init()
        openConnections = http2.openConnections
        connecting = http2.connecting
        streamsInFlight = http2.streamsInFlight
        streamCapacity = http2.streamCapacity
        queuedRequests = http2.queuedRequests
        connectionsOpened = http2.connectionsOpened
        goAwaysReceived = http2.goAwaysReceived
        pingsAcknowledged = http2.pingsAcknowledged
        requestsCompleted = http2.requestsCompleted
    }
}
