import Logging
import NIOConcurrencyHelpers
import OwnerThread

/// A RabbitMQ client for one connection: channel 1 consumes with manual acks, channel 2 publishes
/// with publisher confirms, channel 3 runs declarations and other synchronous operations.
///
/// rabbitmq-c is not thread-safe, so one dedicated thread owns the connection; every method here
/// only queues a command for it and wakes it. The thread reconnects with backoff after any
/// connection or consume-channel failure, redeclares the topology and restarts consumers.
public final class AMQPClient: Sendable {
    let configuration: AMQPConfiguration
    let initialTopology: [AMQPDeclaration]
    let logger: Logger
    let onEvent: @Sendable (AMQPConnectionEvent) -> Void
    let shared = NIOLockedValueBox(ClientState())
    /// A failure (no eventfd could be made) makes `start()` report the client unusable.
    let wakeSignal: Result<WakeSignal, OwnerThreadError>
    /// The owner thread's turns, for the liveness probe.
    let heartbeat: LoopHeartbeat

    public init(
        configuration: AMQPConfiguration,
        topology: [AMQPDeclaration],
        logger: Logger,
        onEvent: @escaping @Sendable (AMQPConnectionEvent) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.initialTopology = topology
        self.logger = logger
        self.onEvent = onEvent
        heartbeat = LoopHeartbeat(name: "AMQP connection \(configuration.connectionName)")
        wakeSignal = Result { () throws(OwnerThreadError) in try WakeSignal() }
    }

    /// Spawns the owner thread, which connects (retrying with backoff) until shutdown.
    public func start() {
        let shouldStart = shared.withLockedValue { state in
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
        guard shouldStart else { return }
        do throws(OwnerThreadError) {
            _ = try wakeSignal.get()
            try OwnerThread.start(name: "amqp") { [self] in
                heartbeat.running()
                ConnectionLoop.run(client: self)
            }
        } catch {
            markUnusable(AMQPError(code: .library, message: "cannot start the AMQP thread: \(error.message)"))
            markStopped()
        }
    }

    public var isConnected: Bool {
        shared.withLockedValue { $0.connectedGeneration != nil }
    }

    /// Which connection is up (counted from 1; nil while disconnected): a delivery whose tag names
    /// another one was already requeued by the broker.
    public var connectionGeneration: UInt64? {
        shared.withLockedValue { $0.connectedGeneration }
    }

    /// Returns once a connection is up (topology declared, consumers started).
    public func waitUntilConnected(timeout: Duration) async throws(AMQPError) {
        let id = shared.withLockedValue { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        // Not a free task: the defer below cancels it, so it never outlives this call.
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            expireConnectWaiter(id, after: timeout)
        }
        defer { timer.cancel() }
        let result: Result<Void, AMQPError> = await withCheckedContinuation { continuation in
            let immediate: Result<Void, AMQPError>? = shared.withLockedValue { state in
                if state.connectedGeneration != nil { return .success(()) }
                if let error = state.permanentError { return .failure(error) }
                if state.phase == .stopping || state.phase == .stopped {
                    return .failure(AMQPError(code: .shutdown, message: "client is shut down"))
                }
                state.connectWaiters[id] = continuation
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        try result.get()
    }

    private func expireConnectWaiter(_ id: UInt64, after timeout: Duration) {
        let expired = shared.withLockedValue { state in
            state.connectWaiters.removeValue(forKey: id).map { ($0, state.lastError) }
        }
        guard let (continuation, lastError) = expired else { return }
        let reason = lastError.map { "; last error: \($0)" } ?? ""
        continuation.resume(returning: .failure(AMQPError(
            code: .timeout, status: lastError?.status, message: "not connected after \(timeout)\(reason)")))
    }

    /// Starts a consumer (basic.qos `prefetch` per consumer, manual acks). `handler` runs on the
    /// AMQP thread and must not block. The consumer is restarted after every reconnect until
    /// `stopConsuming()` or a server-side cancel. Idempotent per queue: consuming a queue already
    /// consumed keeps its one consumer (restarted when the prefetch differs), so calls in any order
    /// never leave two consumers on a queue. A message whose body is larger than
    /// `maxBodyBytes`, or than `bodyRoom()` answers when it arrives (asked on the AMQP thread, per
    /// delivery), is never read into memory: its delivery carries only the start of the body and
    /// `discardedBodySize`.
    public func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int = .max, bodyRoom: (@Sendable () -> Int)? = nil,
                        handler: @escaping @Sendable (AMQPDelivery) -> Void) {
        enqueue(.consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, bodyRoom: bodyRoom, handler: handler))
    }

    /// Cancels all consumers (basic.cancel). Deliveries already handed out can still be acked/nacked.
    public func stopConsuming() {
        enqueue(.stopConsuming)
    }

    /// Acks a delivery. Dropped (debug log) when the tag belongs to an earlier connection: the
    /// broker has already requeued that message, and the old tag would be a channel error.
    public func ack(_ tag: AMQPDeliveryTag, multiple: Bool = false) {
        enqueue(.ack(tag, multiple: multiple))
    }

    /// Rejects a delivery: `requeue` puts it back, otherwise it is dead-lettered (or dropped).
    public func nack(_ tag: AMQPDeliveryTag, requeue: Bool, multiple: Bool = false) {
        enqueue(.nack(tag, requeue: requeue, multiple: multiple))
    }

    /// Publishes with a broker confirm. `completion` (on the AMQP thread) gets success on
    /// basic.ack; failure on basic.nack, basic.return of a mandatory publish, or connection loss
    /// before the confirm — treat every failure as "not published".
    public func publish(
        exchange: String, routingKey: String, body: [UInt8], properties: AMQPProperties,
        mandatory: Bool = false, completion: @escaping @Sendable (Result<Void, AMQPError>) -> Void
    ) {
        enqueue(.publish(PublishRequest(
            exchange: exchange, routingKey: routingKey, body: body, properties: properties,
            mandatory: mandatory, completion: completion)))
    }

    public func publish(
        exchange: String, routingKey: String, body: [UInt8], properties: AMQPProperties, mandatory: Bool = false
    ) async throws(AMQPError) {
        let result: Result<Void, AMQPError> = await withCheckedContinuation { continuation in
            publish(exchange: exchange, routingKey: routingKey, body: body, properties: properties,
                    mandatory: mandatory) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Declares now and, once that succeeded, after every reconnect too.
    public func declare(_ declarations: [AMQPDeclaration]) async throws(AMQPError) {
        _ = try await admin(.declare(declarations))
    }

    /// basic.get with auto-ack; nil when the queue is empty.
    public func get(queue: String) async throws(AMQPError) -> AMQPDelivery? {
        guard case .delivery(let delivery) = try await admin(.get(queue: queue)) else { return nil }
        return delivery
    }

    /// Ready messages in `queue` (passive declare: `.channelClosed` with status 404 if it does not exist).
    public func messageCount(queue: String) async throws(AMQPError) -> Int {
        guard case .count(let count) = try await admin(.messageCount(queue: queue)) else { return 0 }
        return count
    }

    /// Consumers of `queue` as the broker counts them (passive declare), on every connection.
    public func consumerCount(queue: String) async throws(AMQPError) -> Int {
        guard case .count(let count) = try await admin(.consumerCount(queue: queue)) else { return 0 }
        return count
    }

    public func purge(queue: String) async throws(AMQPError) {
        _ = try await admin(.purge(queue: queue))
    }

    public func deleteQueue(_ queue: String) async throws(AMQPError) {
        _ = try await admin(.deleteQueue(queue: queue))
    }

    public func deleteExchange(_ exchange: String) async throws(AMQPError) {
        _ = try await admin(.deleteExchange(exchange: exchange))
    }

    /// A fresh publish channel. RabbitMQ 3.10 can keep nacking every publish to a quorum queue on
    /// a channel that was opened while that queue's leader died, though a new leader took over
    /// (seen by ops/cluster: docs/evidence/code-measurements.md#publish-channel-renewal); a new
    /// channel publishes normally.
    /// Publishes in flight on the old channel fail (`connectionLost`) for their callers to retry.
    public func renewPublishChannel() async throws(AMQPError) {
        _ = try await admin(.renewPublishChannel)
    }

    func admin(_ request: AdminRequest) async throws(AMQPError) -> AdminResult {
        let result: Result<AdminResult, AMQPError> = await withCheckedContinuation { continuation in
            enqueue(.admin(request, completion: { continuation.resume(returning: $0) }))
        }
        return try result.get()
    }

    /// Cancels consumers, sends pending acks, closes channels and the connection, fails pending
    /// publishes with `.shutdown` and returns after the AMQP thread has finished.
    public func shutdown() async {
        enum Action { case finishNow([ClientCommand], [CheckedContinuation<Result<Void, AMQPError>, Never>]), wait, done }
        let action: Action = shared.withLockedValue { state in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                defer { state.connectWaiters = [:] }
                return .finishNow(state.inbox.removeAll(), Array(state.connectWaiters.values))
            case .running:
                state.phase = .stopping
                return .wait
            case .stopping:
                return .wait
            case .stopped:
                return .done
            }
        }
        switch action {
        case .done:
            return
        case .finishNow(let commands, let waiters):
            let error = AMQPError(code: .shutdown, message: "client was shut down")
            commands.forEach { $0.fail(with: error) }
            waiters.forEach { $0.resume(returning: .failure(error)) }
        case .wait:
            try? wakeSignal.get().signal()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let stopped = shared.withLockedValue { state in
                    if state.phase == .stopped { return true }
                    state.stopWaiters.append(continuation)
                    return false
                }
                if stopped { continuation.resume() }
            }
        }
    }

    /// Queues `commands` under one lock, so the owner thread takes them as one batch (tests place
    /// a failure at each position of a batch this way).
    func enqueue(batch commands: [ClientCommand]) {
        let outcome: Bool? = shared.withLockedValue { state in
            if state.phase == .stopping || state.phase == .stopped { return nil }
            var wake = false
            for command in commands where state.inbox.post(command) { wake = true }
            return wake
        }
        switch outcome {
        case nil: commands.forEach { $0.fail(with: AMQPError(code: .shutdown, message: "client is shut down")) }
        case true?: try? wakeSignal.get().signal()
        case false?: break
        }
    }

    func enqueue(_ command: ClientCommand) {
        enum Outcome { case rejected, wake, queued }
        let outcome: Outcome = shared.withLockedValue { state in
            if state.phase == .stopping || state.phase == .stopped { return .rejected }
            return state.inbox.post(command) ? .wake : .queued
        }
        switch outcome {
        case .rejected: command.fail(with: AMQPError(code: .shutdown, message: "client is shut down"))
        case .wake: try? wakeSignal.get().signal()
        case .queued: break
        }
    }
}
