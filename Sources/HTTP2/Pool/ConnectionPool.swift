import Logging
import OwnerThread
import PushCore

/// The I/O thread's world: the request queue, the connections and the poll loop. Everything
/// here runs on that one thread, so nothing needs a lock.
final class ConnectionPool {
    let configuration: HTTP2ClientConfiguration
    let logger: Logger
    let shared: ClientShared
    let wakeup: WakeSignal
    /// The I/O thread's turns, for the liveness probe.
    let heartbeat: LoopHeartbeat

    var tlsContext: TLSContext?
    /// In the order they were opened, as in the machine.
    var connections: [Connection] = []
    /// Every decision: dispatch, opening, backoff, failing the queue, idle close, pacing.
    var machine: ConnectionPoolStateMachine
    /// Requests waiting for a stream, FIFO. Timed-out entries stay until popped (they are done).
    var queue = FIFOQueue<PendingRequest>()
    /// Every live request in arrival order: deadlines are arrival + requestTimeout, so the
    /// front is always the next to expire.
    var deadlines = FIFOQueue<PendingRequest>()
    /// Since when the pool is paced, for the log line when it is not any more.
    var pacedSince: ContinuousClock.Instant?
    var statistics = HTTP2ClientStatistics()

    private var intake: [Submission] = []
    private var answers: [Resolver.Answer] = []
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var poller = Poller()

    init(configuration: HTTP2ClientConfiguration, logger: Logger, shared: ClientShared, wakeup: WakeSignal) {
        self.configuration = configuration
        self.logger = logger
        self.shared = shared
        self.wakeup = wakeup
        machine = ConnectionPoolStateMachine(parameters: ConnectionPoolStateMachine.Parameters(configuration: configuration))
        heartbeat = LoopHeartbeat(name: "HTTP/2 pool \(configuration.host)")
    }

    func run() {
        logger.debug("HTTP/2 I/O thread started")
        heartbeat.running()
        defer { heartbeat.stopped() }
        while true {
            var now = ContinuousClock.now
            let shutdownRequested = shared.takeSubmissions(into: &intake, answers: &answers)
            for submission in intake {
                let request = PendingRequest(submission)
                deadlines.append(request)
                queue.append(request)
                machine.submitted()
            }
            intake.removeAll(keepingCapacity: true)
            if shutdownRequested { break }
            for answer in answers {
                connections.first { $0.id == answer.connectionID }?.resolved(answer.result, now: now)
            }
            answers.removeAll()

            runTimers(now: now)
            dispatch(now: now)
            for connection in connections { connection.flush() }
            connections.removeAll { $0.phase == .closed }
            publishStatistics()

            poller.reset()
            _ = poller.add(fd: wakeup.descriptor, events: Poller.readable)
            for connection in connections {
                _ = poller.add(fd: connection.fd ?? -1, events: connection.pollEvents)
            }
            // Submissions that arrived while this pass ran did not signal: poll them without blocking.
            heartbeat.waiting()
            poller.wait(timeoutMilliseconds: shared.ownerWillWait() ? pollTimeout(now: now) : 0)
            heartbeat.running()

            now = .now
            if poller.returnedEvents(at: 0) != 0 { wakeup.drain() }
            for (index, connection) in connections.enumerated() {
                let events = poller.returnedEvents(at: index + 1)
                if events != 0 { connection.handle(events: events, now: now, buffer: &readBuffer) }
            }
        }
        shutdown()
    }

    /// Puts requests back at the front of the queue (the machine counted them), keeping their order.
    func requeue(_ request: PendingRequest) {
        request.place = .queued
        queue.prepend(request)
    }

    /// Hands queued requests to the connections the machine picks, and opens the connection it asks for.
    func dispatch(now: ContinuousClock.Instant) {
        for connection in connections where connection.state.isUsable {
            machine.connectionRoom(connection.id, room: connection.state.room(now: now), streamLimit: connection.streamLimit)
        }
        while true {
            switch machine.nextDispatch(now: now) {
            case .none:
                return
            case .dispatch(let id):
                guard let request = popLiveRequest(), let connection = connection(id) else {
                    return assertionFailure("the machine dispatches only queued requests to connections the pool holds")
                }
                if !connection.submit(request, now: now) {
                    machine.dispatchFailed(id)
                    requeue(request)
                }
            case .openConnection(let id):
                openConnection(id, now: now)
            case let action:
                assertionFailure("not a dispatch action: \(action)")
                return
            }
        }
    }

    private func popLiveRequest() -> PendingRequest? {
        while let request = queue.popFirst() {
            if !request.isDone { return request }
        }
        return nil
    }

    func connection(_ id: ConnectionPoolStateMachine.ConnectionID) -> Connection? {
        connections.first { $0.id == id }
    }

    /// Acts on a change of pace: the first cut and the return to unpaced are worth an operator's
    /// eye; the steps between are not.
    func paced(_ action: ConnectionPoolStateMachine.Action) {
        guard case .paced(let change) = action else {
            return assert(action == .none, "pacing returns .paced or .none")
        }
        switch change {
        case .cut(let ceiling) where pacedSince == nil:
            pacedSince = .now
            logger.notice("the server answers slower than a quarter of the request timeout: requests beyond the streams in flight wait unsent until it catches up",
                          metadata: [LogKeys.streamCeiling: "\(ceiling)"])
        case .unpaced:
            if let pacedSince {
                logger.info("the server answers in time again: streams no longer paced",
                            metadata: [LogKeys.pacedFor: "\(ContinuousClock.now - pacedSince)"])
            }
            pacedSince = nil
        case .cut(let ceiling), .raised(let ceiling):
            logger.debug("streams paced", metadata: [LogKeys.streamCeiling: "\(ceiling)"])
        }
    }

    private func openConnection(_ id: ConnectionPoolStateMachine.ConnectionID, now: ContinuousClock.Instant) {
        let context: TLSContext
        do {
            if tlsContext == nil { tlsContext = try TLSContext(configuration: configuration) }
            context = tlsContext!
        } catch {
            return connectAttemptFailed(id, error, now: now)
        }
        let connection = Connection(id: id, configuration: configuration, tlsContext: context,
                                    logger: logger, delegate: self, now: now)
        connections.append(connection)
        logger.debug("opening connection", metadata: [LogKeys.connectionID: "\(id)"])
        Resolver.resolve(host: connection.target.host, port: connection.target.port,
                         connectionID: connection.id, shared: shared)
    }

    /// Backs off, and fails the queued requests when no other connection can take them.
    func connectAttemptFailed(_ id: ConnectionPoolStateMachine.ConnectionID, _ error: HTTP2Error, now: ContinuousClock.Instant) {
        switch machine.connectFailed(id, now: now) {
        case .none:
            break
        case .backOff(let delay):
            logger.warning("connection attempt failed", metadata: [LogKeys.error: "\(error)", LogKeys.retryIn: "\(delay)"])
        case .backOffAndFailQueued(let delay):
            logger.warning("connection attempt failed", metadata: [LogKeys.error: "\(error)", LogKeys.retryIn: "\(delay)"])
            failQueued(error)
        case let action:
            assertionFailure("not a connect-failure action: \(action)")
        }
    }

    /// Completes every queued request with `error` (the machine already counted them out).
    func failQueued(_ error: HTTP2Error) {
        while let request = queue.popFirst() {
            request.complete(.failure(error))
        }
    }

    func publishStatistics() {
        let gauges = machine.statistics()
        statistics.openConnections = gauges.open
        statistics.connecting = gauges.connecting
        statistics.streamsInFlight = gauges.streamsInFlight
        statistics.queuedRequests = gauges.queued
        statistics.streamCapacity = gauges.streamCapacity
        shared.publish(statistics)
    }

    /// GOAWAY(NO_ERROR) on every connection; everything not yet answered fails with `.shutdown`.
    private func shutdown() {
        let action = machine.shutdown()
        assert(action == .shutDown, "the pool shuts down once")
        let error = HTTP2Error(code: .shutdown, message: "client shut down")
        failQueued(error)
        let now = ContinuousClock.now
        for connection in connections { connection.closeGracefully(failingSentWith: error, now: now) }
        connections.removeAll()
        failQueued(error)
        publishStatistics()
        logger.debug("HTTP/2 I/O thread stopped")
    }
}
