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
    var connections: [Connection] = []
    var nextConnectionID = 0
    /// Requests waiting for a stream, FIFO. Timed-out entries stay until popped (they are done).
    var queue = FIFOQueue<PendingRequest>()
    var queuedCount = 0
    /// Every live request in arrival order: deadlines are arrival + requestTimeout, so the
    /// front is always the next to expire.
    var deadlines = FIFOQueue<PendingRequest>()
    /// Between failed connection attempts: a down server gets no connect storm.
    /// Capped at 2 s so that the worker sends again within ~2 s of APNs' return (issue "reliability": 5 s).
    var backoff = Backoff(range: .milliseconds(100) ... .seconds(2))
    var connectNotBefore: ContinuousClock.Instant?
    /// Since when the pool is paced, for the log line when it is not any more.
    var pacedSince: ContinuousClock.Instant?
    var statistics = HTTP2ClientStatistics()
    var shuttingDown = false
    /// The last stream limit a peer announced: APNs lowers it to 1 after a rejection and raises it
    /// again after a success (the local cap until a first SETTINGS).
    private lazy var lastStreamLimit = configuration.maxStreamsPerConnection
    /// Requests on the wire at most, by how fast the server answers.
    lazy var pacing = StreamPacing(requestTimeout: configuration.requestTimeout)
    /// Streams the connections allow, before pacing (set with the statistics).
    var connectionCapacity = 0

    private var intake: [Submission] = []
    private var answers: [Resolver.Answer] = []
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var poller = Poller()

    init(configuration: HTTP2ClientConfiguration, logger: Logger, shared: ClientShared, wakeup: WakeSignal) {
        self.configuration = configuration
        self.logger = logger
        self.shared = shared
        self.wakeup = wakeup
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
                enqueue(request)
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

    func enqueue(_ request: PendingRequest, atFront: Bool = false) {
        request.place = .queued
        queuedCount += 1
        if atFront { queue.prepend(request) } else { queue.append(request) }
    }

    /// Hands queued requests to the least-loaded connection with room; opens another
    /// connection when none has room.
    func dispatch(now: ContinuousClock.Instant) {
        let allowed = pacing.allowed(capacity: .max)
        var onTheWire = allowed == .max ? 0 : streamsInFlight
        while let request = queue.first {
            if request.isDone {
                _ = queue.popFirst()
                continue
            }
            guard onTheWire < allowed, let connection = leastLoadedConnectionWithRoom(now: now) else { break }
            _ = queue.popFirst()
            queuedCount -= 1
            if connection.submit(request, now: now) {
                onTheWire += 1
            } else {
                enqueue(request, atFront: true)
            }
        }
        // Requests held back by the pacing need no other connection: the server is slow, not full.
        if queuedCount > 0, onTheWire < allowed { openConnectionIfAllowed(now: now) }
    }

    var streamsInFlight: Int { connections.reduce(0) { $0 + $1.inFlight } }

    /// Acts on a change of pace: the first cut and the return to unpaced are worth an operator's
    /// eye; the steps between are not.
    func paced(_ change: StreamPacing.Change?) {
        guard let change else { return }
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

    private func leastLoadedConnectionWithRoom(now: ContinuousClock.Instant) -> Connection? {
        var best: Connection?
        for connection in connections where connection.canTakeRequest(now: now) {
            if best == nil || connection.inFlight < best!.inFlight { best = connection }
        }
        return best
    }

    /// One connection attempt at a time, never more than `maxConnections` that are not
    /// draining, and not before the backoff after a failure has passed.
    private func openConnectionIfAllowed(now: ContinuousClock.Instant) {
        var active = 0
        for connection in connections where connection.phase != .closed && !connection.draining {
            if connection.isConnecting { return }
            active += 1
        }
        guard active < configuration.maxConnections else { return }
        if let connectNotBefore, now < connectNotBefore { return }
        let context: TLSContext
        do {
            if tlsContext == nil { tlsContext = try TLSContext(configuration: configuration) }
            context = tlsContext!
        } catch {
            return connectAttemptFailed(error, now: now)
        }
        nextConnectionID += 1
        let connection = Connection(id: nextConnectionID, configuration: configuration, tlsContext: context,
                                    logger: logger, delegate: self, now: now)
        connections.append(connection)
        logger.debug("opening connection", metadata: [LogKeys.connectionID: "\(nextConnectionID)"])
        Resolver.resolve(host: connection.target.host, port: connection.target.port,
                         connectionID: connection.id, shared: shared)
    }

    /// Backs off, and fails the queued requests when no other connection can take them.
    func connectAttemptFailed(_ error: HTTP2Error, now: ContinuousClock.Instant) {
        let delay = backoff.next()
        connectNotBefore = now + delay
        logger.warning("connection attempt failed", metadata: [LogKeys.error: "\(error)", LogKeys.retryIn: "\(delay)"])
        let alternative = connections.contains { connection in
            connection.phase != .closed && !connection.draining && (connection.isConnecting || connection.phase == .ready)
        }
        if !alternative { failQueued(error) }
    }

    func failQueued(_ error: HTTP2Error) {
        while let request = queue.popFirst() {
            request.complete(.failure(error))
        }
        queuedCount = 0
    }

    func publishStatistics() {
        var open = 0, connecting = 0, streams = 0
        var limited = 0, capacity = 0
        for connection in connections {
            if connection.phase == .ready { open += 1 } else if connection.isConnecting { connecting += 1 }
            streams += connection.inFlight
            if connection.phase == .ready, !connection.draining, let limit = connection.streamLimit {
                limited += 1
                capacity += limit
                lastStreamLimit = limit
            }
        }
        // Connections not open yet (or draining) will get what the server allowed last.
        capacity += max(0, configuration.maxConnections - limited) * lastStreamLimit
        connectionCapacity = capacity
        capacity = pacing.allowed(capacity: capacity)
        statistics.openConnections = open
        statistics.connecting = connecting
        statistics.streamsInFlight = streams
        statistics.queuedRequests = queuedCount
        statistics.streamCapacity = capacity
        shared.publish(statistics)
    }

    /// GOAWAY(NO_ERROR) on every connection; everything not yet answered fails with `.shutdown`.
    private func shutdown() {
        shuttingDown = true
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
