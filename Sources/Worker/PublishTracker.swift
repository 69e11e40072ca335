import AMQP
import Synchronization

/// Publishes many confirmed messages without waiting for each confirm, and tells the caller when
/// all of them are confirmed (or the first failure). Events must be confirmed before the job that
/// caused them is acked; pipelining them keeps that rule from costing a round trip per event.
final class PublishTracker: Sendable {
    struct Message: Sendable {
        var exchange: String
        var routingKey: String
        var body: [UInt8]
        var properties: AMQPProperties
    }

    private struct State {
        var outstanding = 0
        var failure: AMQPError?
        var waiter: (limit: Int, continuation: CheckedContinuation<Void, Never>)?
    }

    private let amqp: AMQPClient
    private let state = Mutex(State())

    init(amqp: AMQPClient) { self.amqp = amqp }

    /// `confirmed` runs (on the AMQP thread) once the broker confirmed this message.
    func publish(_ message: Message, confirmed: (@Sendable () -> Void)? = nil) {
        state.withLock { $0.outstanding += 1 }
        amqp.publish(exchange: message.exchange, routingKey: message.routingKey, body: message.body,
                     properties: message.properties) { [self] result in
            if case .success = result { confirmed?() }
            let resume: CheckedContinuation<Void, Never>? = state.withLock { state in
                state.outstanding -= 1
                if case let .failure(error) = result, state.failure == nil { state.failure = error }
                guard let waiter = state.waiter, state.outstanding <= waiter.limit || state.failure != nil else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            resume?.resume()
        }
    }

    /// Suspends until at most `limit` publishes are unconfirmed (or one failed).
    func wait(untilOutstandingAtMost limit: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.outstanding <= limit || state.failure != nil { return true }
                state.waiter = (limit, continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Waits for every publish; throws the first failure.
    func finish() async throws(AMQPError) {
        await wait(untilOutstandingAtMost: 0)
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }
}
