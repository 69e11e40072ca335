import AMQP

/// Why a job was not (known to be) published, or a subscription not made. Only after `send`
/// returned did the broker take the job; on `.timeout` and `.connectionLost` it may have taken it
/// all the same (publish again with the same id: the events say what happened to each).
public enum PushworkerClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No connection to the broker within the timeout (the reason says what was tried).
    case notConnected(String)
    /// The broker did not confirm within the timeout.
    case timeout(Duration)
    /// The broker refused the message (basic.nack).
    case nacked(String)
    /// No queue of this name: the mandatory publish came back (basic.return).
    case unroutable(queue: String)
    /// The connection dropped before the confirm.
    case connectionLost(String)
    /// The client was shut down.
    case shutdown
    /// The job cannot be written as the worker reads jobs.
    case invalidJob(PushworkerJobError)
    /// Any other refusal by the broker (a declaration with other arguments: 406, …).
    case broker(String)

    public var description: String {
        switch self {
        case .notConnected(let reason): "not connected to the broker: \(reason)"
        case .timeout(let duration): "the broker did not confirm within \(duration)"
        case .nacked(let reason): "not confirmed: the broker refused the message (\(reason))"
        case .unroutable(let queue): "no queue \"\(queue)\": the broker returned the message"
        case .connectionLost(let reason): "the connection was lost before the broker confirmed: \(reason)"
        case .shutdown: "the client is shut down"
        case .invalidJob(let error): "invalid job: \(error)"
        case .broker(let reason): "the broker refused: \(reason)"
        }
    }

    /// The AMQP module's error in this library's terms; `queue` names where a return came from.
    init(_ error: AMQPError, queue: String) {
        switch error.code {
        case .nacked: self = .nacked(error.message)
        case .unroutable: self = .unroutable(queue: queue)
        case .connectionLost: self = .connectionLost(error.message)
        case .shutdown: self = .shutdown
        case .timeout, .connectFailed, .authenticationFailed, .invalidURL: self = .notConnected(error.description)
        default: self = .broker(error.description)
        }
    }
}
