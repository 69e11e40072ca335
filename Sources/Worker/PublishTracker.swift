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
        var waiter: (limit: Int, resume: @Sendable () -> Void)?
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
            let resume: (@Sendable () -> Void)? = state.withLock { state in
                state.outstanding -= 1
                if case let .failure(error) = result, state.failure == nil { state.failure = error }
                guard let waiter = state.waiter, state.outstanding <= waiter.limit || state.failure != nil else { return nil }
                state.waiter = nil
                return waiter.resume
            }
            resume?()
        }
    }

    /// Suspends until at most `limit` publishes are unconfirmed (or one failed).
    func wait(untilOutstandingAtMost limit: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenOutstanding(atMost: limit) { continuation.resume() }
        }
    }

    /// Waits for every publish; throws the first failure.
    func finish() async throws(AMQPError) {
        await wait(untilOutstandingAtMost: 0)
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// `finish()` without a task waiting: `done` runs once every publish is confirmed or one
    /// failed, on the AMQP thread (or here, if that is already so).
    func whenFinished(_ done: @escaping @Sendable (Result<Void, AMQPError>) -> Void) {
        whenOutstanding(atMost: 0) { [self] in
            done(state.withLock { $0.failure }.map { .failure($0) } ?? .success(()))
        }
    }

    private func whenOutstanding(atMost limit: Int, _ resume: @escaping @Sendable () -> Void) {
        let ready = state.withLock { state in
            if state.outstanding <= limit || state.failure != nil { return true }
            state.waiter = (limit, resume)
            return false
        }
        if ready { resume() }
    }
}
