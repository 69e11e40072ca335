import HTTP2
import PushTransport

extension PushResult {
    /// No answer: the same for every platform. Without one the platform may or may not have the
    /// notification; retrying risks a duplicate, not retrying risks a loss, and the contract is
    /// at-least-once.
    public init(transportError error: HTTP2Error) {
        let reason: String = switch error.code {
        case .connectFailed: "ConnectFailed"
        case .tlsFailed: "TLSFailed"
        case .http2NotOffered: "HTTP2NotOffered"
        case .addressNotAllowed: "EndpointNotAllowed"
        case .refused: "Refused"
        case .connectionLost: "ConnectionLost"
        case .timeout: "Timeout"
        case .unsent: "Unsent"
        case .protocolError: "ProtocolError"
        case .shutdown: "Shutdown"
        case .responseTooLarge: "ResponseTooLarge"
        default: "\(error.code)"
        }
        if error.code == .responseTooLarge || error.code == .addressNotAllowed {
            // A server that will not answer within bounds would do it again, and a host in a
            // network the client may not reach stays there: this device's failure, not a wait.
            self.init(status: 0, reason: reason, outcome: .permanentFailure(reason: "\(reason): \(error.message)"))
        } else if error.code == .tlsFailed || error.code == .http2NotOffered {
            // A refused or expired client certificate, or a server we cannot verify: no device is to
            // blame and every other one would fail the same way, so the worker pauses instead.
            self.init(status: 0, reason: reason, outcome: .credentialsProblem(reason: "\(reason): \(error.message)"))
        } else if error.requestWasNotProcessed {
            // The platform never saw it (unreachable, refused stream): an outage, not this
            // device's attempt.
            self.init(status: 0, reason: reason, outcome: .unavailable(reason: "\(reason): \(error.message)"))
        } else {
            self.init(status: 0, reason: reason, outcome: .retryable(reason: "\(reason): \(error.message)"))
        }
    }
}
