/// Why a request failed, phrased so the caller can decide whether resending is safe.
public struct HTTP2Error: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// DNS, TCP or proxy failure: the request was never sent.
        case connectFailed
        /// Handshake, certificate verification, or ALPN other than h2: the request was never sent.
        case tlsFailed
        /// Refused by the server (REFUSED_STREAM or above a GOAWAY's last stream id) more often
        /// than the pool resubmits: the server did not process it.
        case refused
        /// The connection died after the request was (possibly) sent: the outcome is unknown.
        case connectionLost
        /// No response within `requestTimeout` to a request that was sent: the outcome is unknown.
        case timeout
        /// `requestTimeout` passed while the request still waited for a connection: never sent.
        case unsent
        case protocolError
        /// The client shut down before the request completed.
        case shutdown
    }

    public let kind: Kind
    public let message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// True when the server cannot have processed the request, so resending it cannot duplicate it.
    public var requestWasNotProcessed: Bool {
        switch kind {
        case .connectFailed, .tlsFailed, .refused, .unsent: true
        case .connectionLost, .timeout, .protocolError, .shutdown: false
        }
    }

    public var description: String { "HTTP/2 \(kind): \(message)" }
}
