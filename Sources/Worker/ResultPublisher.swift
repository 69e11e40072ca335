import AMQP
import Logging
import PushCore
import NIOConcurrencyHelpers

/// Publishes what a settled job owes the broker (its events, retry and held jobs, a dead-letter
/// copy) until the broker has confirmed every message, and only then reports success, so the job
/// is acked only after that (README "Delivery guarantees").
///
/// The devices' outcomes are known by the time this runs, so a publish that fails (a subscriber's
/// full queue nacks it, the exchange was deleted, a mandatory copy came back unroutable, the
/// connection dropped) is tried again with backoff, alone: the notifications are never sent
/// again. While any job's results fail, consumption pauses and `/status` names the problem.
/// Gives up (`false`, the delivery stays unacked for redelivery) only when the worker shuts down.
final class ResultPublisher: Sendable {
    struct Message: Sendable {
        var exchange: String
        var routingKey: String
        var body: [UInt8]
        var properties: AMQPProperties
        /// Copies of jobs must reach a queue: an unroutable one comes back as a failure.
        var mandatory = false
        /// Runs (on the AMQP thread) once the broker confirmed this message.
        var confirmed: (@Sendable () -> Void)?
        /// Properties to try instead if these cannot be encoded at all (a dead-letter copy of a
        /// hostile message); without them such a message is dropped with an error logged.
        var fallback: AMQPProperties?

        var destination: String { exchange.isEmpty ? "queue \(routingKey)" : "exchange \(exchange) (\(routingKey))" }
    }

    /// The wait before another try: 1 s doubling to 30 s (with jitter, so workers do not retry in step).
    static let retryDelays: ClosedRange<Duration> = .seconds(1)...(.seconds(30))

    private let amqp: any JobBroker
    private let gate: ConsumptionGate
    private let status: WorkerStatus
    private let delayed: DelayedWork
    private let topology: [AMQPDeclaration]
    /// Jobs whose last try failed; consumption is paused while any is.
    private let failingJobs = NIOLockedValueBox(0)
    /// Tries that failed for want of a connection: run as soon as it is back, not after their
    /// backoff (a broker restart otherwise kept consumption paused ~8 s after it returned).
    private let waitingForConnection = NIOLockedValueBox<[@Sendable () -> Void]>([])
    /// Publish-channel renewals after repeated nacks: at most one per `renewalInterval` for all
    /// jobs, since each fails what is in flight on the old channel.
    private let channelRenewals = ChannelRenewals(interval: ResultPublisher.renewalInterval)
    static let renewalInterval: Duration = .seconds(5)
    /// A job's results nacked this many tries in a row renew the publish channel.
    static let nacksBeforeRenewal = 3

    init(amqp: any JobBroker, gate: ConsumptionGate, status: WorkerStatus, delayed: DelayedWork, topology: [AMQPDeclaration]) {
        self.amqp = amqp
        self.gate = gate
        self.status = status
        self.delayed = delayed
        self.topology = topology
    }

    /// `done(true)` once every message is confirmed (on the AMQP thread, or here when there is
    /// nothing to publish); `done(false)` when the worker shut down first.
    /// `logger` is built only if something is logged: a job's logger with its metadata is costly
    /// when made for every job (measured: docs/evidence/code-measurements.md#job-logger).
    func publish(_ messages: [Message], logger: @autoclosure @escaping @Sendable () -> Logger,
                 done: @escaping @Sendable (Bool) -> Void) {
        guard messages.count == 1 else {
            return Round(publisher: self, messages: messages, logger: logger, done: done).start()
        }
        publish(messages[0], logger: logger(), done: done)
    }

    /// One message, as `publish(_:logger:done:)` for an array. Most jobs owe one (job.completed):
    /// its Round, lock and bookkeeping are made only if the first try fails.
    func publish(_ message: Message, logger: @autoclosure @escaping @Sendable () -> Logger,
                 done: @escaping @Sendable (Bool) -> Void) {
        send(message) { [self] result in
            switch result {
            case .success:
                message.confirmed?()
                done(true)
            case .failure(let error):
                Round(publisher: self, messages: [], logger: logger, done: done).firstTryFailed(message, error)
            }
        }
    }

    func publish(_ messages: [Message], logger: @autoclosure @escaping @Sendable () -> Logger) async -> Bool {
        await withCheckedContinuation { continuation in
            publish(messages, logger: logger()) { continuation.resume(returning: $0) }
        }
    }

    fileprivate func started(failing: Bool) {
        guard failing else { return }
        let first = failingJobs.withLockedValue { count in
            count += 1
            return count == 1
        }
        if first { gate.pause(.resultsUnpublishable) }
    }

    fileprivate func recovered() {
        let last = failingJobs.withLockedValue { count in
            count -= 1
            return count == 0
        }
        if last {
            status.setResultsProblem(nil)
            gate.resume(.resultsUnpublishable)
        }
    }

    /// The AMQP connection is up again (its topology declared): every try that waits for it runs now.
    func connectionRestored(after delay: Duration = .zero) {
        let waiting = waitingForConnection.withLockedValue { waiting in
            defer { waiting = [] }
            return waiting
        }
        // Off the AMQP thread that reports the connection.
        for retry in waiting { _ = delayed.schedule(after: delay) { retry() } }
    }

    fileprivate func retryWhenConnected(_ retry: @escaping @Sendable () -> Void) {
        waitingForConnection.withLockedValue { $0.append(retry) }
        // Its event may have run before this registered; 200 ms keeps a try that failed while the
        // loss was not yet reported from repeating at full speed.
        if status.snapshot.amqpConnected { connectionRestored(after: .milliseconds(200)) }
    }

    fileprivate func scheduleRetry(after delay: Duration, redeclare: Bool, renewChannel: Bool,
                                   _ retry: @escaping @Sendable () -> Void) -> Bool {
        delayed.schedule(after: delay) { [self] in
            // A deleted exchange or delay queue is declared again before the messages go back to it.
            if redeclare { try? await amqp.declare(topology) }
            if renewChannel, channelRenewals.mayRenew(now: .now) { try? await amqp.renewPublishChannel() }
            retry()
        }
    }

    fileprivate func send(_ message: Message, completion: @escaping @Sendable (Result<Void, AMQPError>) -> Void) {
        amqp.publish(exchange: message.exchange, routingKey: message.routingKey, body: message.body,
                     properties: message.properties, mandatory: message.mandatory, completion: completion)
    }

    fileprivate func noteFailure(_ text: String) { status.resultsFailed(text) }
}

/// One job's messages across tries: each try publishes only what is still unconfirmed.
private final class Round: Sendable {
    private struct State {
        var pending: [ResultPublisher.Message]
        var outstanding = 0
        var failed: [(ResultPublisher.Message, AMQPError)] = []
        var tries = 0
        var backoff = Backoff(range: ResultPublisher.retryDelays)
        var failing = false
        /// A retry is scheduled (by backoff, and maybe by the connection's return): the first to run wins.
        var retryScheduled = false
    }

    private let publisher: ResultPublisher
    private let makeLogger: @Sendable () -> Logger
    private var logger: Logger { makeLogger() }
    private let done: @Sendable (Bool) -> Void
    private let state: NIOLockedValueBox<State>

    init(publisher: ResultPublisher, messages: [ResultPublisher.Message], logger: @escaping @Sendable () -> Logger,
         done: @escaping @Sendable (Bool) -> Void) {
        self.publisher = publisher
        self.makeLogger = logger
        self.done = done
        self.state = NIOLockedValueBox(State(pending: messages))
    }

    func start() {
        let messages: [ResultPublisher.Message] = state.withLockedValue { state in
            defer { state.pending = [] }
            state.outstanding = state.pending.count
            state.failed = []
            state.tries += 1
            return state.pending
        }
        guard !messages.isEmpty else { return finish() }
        for message in messages {
            publisher.send(message) { [self] result in
                if case .success = result { message.confirmed?() }
                if record(result, of: message) { finish() }
            }
        }
    }

    /// The publisher's one-message fast path failed its first try: from here on this Round
    /// retries it as if it had started it.
    func firstTryFailed(_ message: ResultPublisher.Message, _ error: AMQPError) {
        state.withLockedValue { state in
            state.outstanding = 1
            state.tries = 1
        }
        if record(.failure(error), of: message) { finish() }
    }

    /// Returns whether this was the try's last outstanding answer.
    private func record(_ result: Result<Void, AMQPError>, of message: ResultPublisher.Message) -> Bool {
        state.withLockedValue { state in
            if case .failure(let error) = result {
                if error.code == .unencodable {
                    // Trying the same bytes again cannot help.
                    if let fallback = message.fallback {
                        var plain = message
                        plain.properties = fallback
                        plain.fallback = nil
                        state.failed.append((plain, error))
                    } else {
                        logger.error("a result could not be encoded and is dropped", metadata: [
                            LogKeys.destination: "\(message.destination)", LogKeys.error: "\(error)"])
                    }
                } else {
                    state.failed.append((message, error))
                }
            }
            state.outstanding -= 1
            return state.outstanding == 0
        }
    }

    private func retryNow() {
        let due = state.withLockedValue { state in
            defer { state.retryScheduled = false }
            return state.retryScheduled
        }
        if due { start() }
    }

    private func finish() {
        enum Next { case succeeded(wasFailing: Bool), retry(Duration, [(ResultPublisher.Message, AMQPError)], tries: Int, firstFailure: Bool), shutdown(wasFailing: Bool) }
        let next: Next = state.withLockedValue { state in
            if state.failed.isEmpty { return .succeeded(wasFailing: state.failing) }
            if state.failed.contains(where: { $0.1.code == .shutdown }) { return .shutdown(wasFailing: state.failing) }
            let firstFailure = !state.failing
            state.failing = true
            state.pending = state.failed.map(\.0)
            return .retry(state.backoff.next(), state.failed, tries: state.tries, firstFailure: firstFailure)
        }
        switch next {
        case .succeeded(let wasFailing):
            if wasFailing {
                logger.notice("results published after all; the job is settled")
                publisher.recovered()
            }
            done(true)
        case .shutdown(let wasFailing):
            if wasFailing { publisher.recovered() }
            done(false)
        case let .retry(delay, failures, tries, firstFailure):
            let (message, error) = failures[0]
            let problem = "results could not be published to \(message.destination): \(error)"
            publisher.noteFailure(problem)
            publisher.started(failing: firstFailure)
            // A returned copy means a queue the worker relies on is gone: louder than a passing refusal.
            let level: Logger.Level = failures.contains { $0.1.code == .unroutable } ? .error : .warning
            logger.log(level: level, "results could not be published; keeping the devices' outcomes and trying again", metadata: [
                LogKeys.destination: "\(message.destination)", LogKeys.error: "\(error)",
                LogKeys.attempt: "\(tries)", LogKeys.retryIn: "\(delay)", LogKeys.unconfirmed: "\(failures.count)",
            ])
            // A missing exchange (404 closes the channel) or an unroutable copy (its queue was deleted):
            // declare the topology again before the next try.
            let redeclare = failures.contains { $0.1.code == .unroutable || $0.1.status == 404 || $0.1.code == .channelClosed }
            state.withLockedValue { $0.retryScheduled = true }
            if failures.allSatisfy({ $0.1.code == .connectionLost || $0.1.code == .connectFailed }) {
                publisher.retryWhenConnected { [self] in retryNow() }
            }
            let renewChannel = tries >= ResultPublisher.nacksBeforeRenewal && failures.contains { $0.1.code == .nacked }
            let scheduled = publisher.scheduleRetry(after: delay, redeclare: redeclare, renewChannel: renewChannel) { [self] in retryNow() }
            if !scheduled {
                logger.warning("shutting down with unpublished results: the job stays unacked and is redelivered")
                publisher.recovered()
                done(false)
            }
        }
    }
}
