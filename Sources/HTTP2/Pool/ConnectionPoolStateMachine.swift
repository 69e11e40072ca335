import PushCore

/// The decisions of the HTTP/2 pool, apart from its I/O: which connection takes the next queued
/// request, when a connection opens, the backoff between failed attempts, when the queue fails,
/// which idle connection closes, and the pace of requests on the wire. `ConnectionPool` gathers
/// events (submissions, connection callbacks, timers), feeds them here and performs the actions.
///
/// It holds connection ids and counts only: the queued requests themselves stay in the pool's FIFO
/// (`.dispatch(to:)` means "the first live request in the queue"), so the hot path costs no lookup
/// and no allocation. Time is passed in.
struct ConnectionPoolStateMachine {
    typealias ConnectionID = Int

    /// The configuration values the decisions depend on.
    struct Parameters: Equatable, Sendable {
        var minConnections: Int
        var maxConnections: Int
        /// Local cap on a connection's concurrent streams: what a connection not yet open is
        /// expected to allow.
        var maxStreamsPerConnection: Int
        var idleTimeout: Duration
        var requestTimeout: Duration
        /// Between failed connection attempts: a down server gets no connect storm.
        var backoff: ClosedRange<Duration>

        /// Capped at 2 s so that the worker sends again within ~2 s of the server's return.
        static let defaultBackoff: ClosedRange<Duration> = .milliseconds(100) ... .seconds(2)

        init(minConnections: Int, maxConnections: Int, maxStreamsPerConnection: Int, idleTimeout: Duration,
             requestTimeout: Duration, backoff: ClosedRange<Duration> = defaultBackoff) {
            self.minConnections = minConnections
            self.maxConnections = maxConnections
            self.maxStreamsPerConnection = maxStreamsPerConnection
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
            self.backoff = backoff
        }

        init(configuration: HTTP2ClientConfiguration) {
            self.init(minConnections: configuration.minConnections, maxConnections: configuration.maxConnections,
                      maxStreamsPerConnection: configuration.maxStreamsPerConnection,
                      idleTimeout: configuration.idleConnectionTimeout, requestTimeout: configuration.requestTimeout)
        }
    }

    enum Action: Equatable, Sendable {
        case none
        /// Hand the first live queued request to this connection (the machine counted it on the wire).
        case dispatch(to: ConnectionID)
        /// Open a connection with this id: resolve, connect, TLS.
        case openConnection(ConnectionID)
        /// A connection attempt failed: log it; the next waits `retryIn`.
        case backOff(retryIn: Duration)
        /// As `backOff`, and fail every queued request with the attempt's error: no other
        /// connection can take them.
        case backOffAndFailQueued(retryIn: Duration)
        /// Put the refused request, or the closed connection's unsent requests, back at the front of
        /// the queue.
        case requeue
        /// Fail the refused request: refused too often, or the pool shuts down.
        case failRefused
        /// Fail the closed connection's unsent requests: the pool shuts down.
        case failUnsent
        /// Close this connection gracefully: idle beyond `minConnections`.
        case closeIdle(ConnectionID)
        /// The pace of requests on the wire changed.
        case paced(StreamPacing.Change)
        /// Fail every queued request and close every connection: the pool shuts down.
        case shutDown
    }

    /// A connection as the pool sees it. Draining happens only after set-up (a GOAWAY, no stream id
    /// left, an idle close), so a connection that is not open yet carries no counts.
    enum ConnectionSlot: Equatable, Sendable {
        /// Resolving, connecting, proxy CONNECT or TLS handshake.
        case opening
        case ready(Ready)
        /// Streams in flight finish; none start.
        case draining(inFlight: Int)
    }

    struct Ready: Equatable, Sendable {
        var inFlight = 0
        /// How many more streams the connection opens now (stream cap and request rate), as read
        /// at the start of the pass and counted down by each dispatch.
        var room = 0
        /// min(local cap, the peer's limit) once the peer's SETTINGS are in.
        var streamLimit: Int?
        /// When the last request started (or the connection became ready): the idle close counts from it.
        var lastRequest: StoredInstant
    }

    struct Connection: Equatable, Sendable {
        let id: ConnectionID
        var slot: ConnectionSlot
    }

    /// A request may be refused this often (REFUSED_STREAM / GOAWAY) and resubmitted.
    static let maximumResubmissions = 3

    let parameters: Parameters
    /// In the order they were opened: ties in load go to the oldest.
    private(set) var connections: [Connection] = []
    private(set) var nextConnectionID = 0
    /// Live requests in the pool's FIFO (timed-out entries not counted).
    private(set) var queued = 0
    private(set) var backoff: Backoff
    private(set) var connectNotBefore: ContinuousClock.Instant?
    /// Requests on the wire at most, by how fast the server answers.
    private(set) var pacing: StreamPacing
    /// Streams the connections allow, before pacing (set with the statistics).
    private(set) var connectionCapacity = 0
    /// The last stream limit a peer announced: APNs lowers it to 1 after a rejection and raises it
    /// again after a success (the local cap until a first SETTINGS).
    private(set) var lastStreamLimit: Int
    private(set) var shuttingDown = false

    init(parameters: Parameters) {
        self.parameters = parameters
        backoff = Backoff(range: parameters.backoff)
        pacing = StreamPacing(requestTimeout: parameters.requestTimeout)
        lastStreamLimit = parameters.maxStreamsPerConnection
    }

    // MARK: Queries

    var streamsInFlight: Int {
        var total = 0
        for connection in connections {
            switch connection.slot {
            case .opening: break
            case .ready(let ready): total += ready.inFlight
            case .draining(let inFlight): total += inFlight
            }
        }
        return total
    }

    /// Ready and not draining.
    var usableConnections: Int {
        var count = 0
        for connection in connections {
            if case .ready = connection.slot { count += 1 }
        }
        return count
    }

    /// The earliest instant at which `tick` or `nextDispatch` has something to do.
    func nextDeadline() -> ContinuousClock.Instant? {
        var next: ContinuousClock.Instant?
        if queued > 0, let connectNotBefore { next = connectNotBefore }
        // Idle deadlines matter only while the idle close would act on them: the last
        // `minConnections` stay open, and a past deadline for them would make every poll return at once.
        guard usableConnections > parameters.minConnections else { return next }
        for connection in connections {
            if let idle = idleDeadline(connection.slot) { next = min(next ?? idle, idle) }
        }
        return next
    }

    private func idleDeadline(_ slot: ConnectionSlot) -> ContinuousClock.Instant? {
        guard case .ready(let ready) = slot, ready.inFlight == 0 else { return nil }
        return ready.lastRequest.instant + parameters.idleTimeout
    }

    struct Statistics: Equatable, Sendable {
        /// Ready, draining included.
        var open = 0
        var connecting = 0
        var streamsInFlight = 0
        var queued = 0
        /// What the connections allow (those not open yet: the last limit a peer announced), paced.
        var streamCapacity = 0
    }

    /// The gauges, once per pass; also sets the capacity that pacing is raised towards.
    mutating func statistics() -> Statistics {
        var statistics = Statistics(queued: queued)
        var limited = 0, capacity = 0
        for connection in connections {
            switch connection.slot {
            case .opening:
                statistics.connecting += 1
            case .draining(let inFlight):
                statistics.open += 1
                statistics.streamsInFlight += inFlight
            case .ready(let ready):
                statistics.open += 1
                statistics.streamsInFlight += ready.inFlight
                if let limit = ready.streamLimit {
                    limited += 1
                    capacity += limit
                    lastStreamLimit = limit
                }
            }
        }
        // Connections not open yet (or draining) will get what the server allowed last.
        capacity += max(0, parameters.maxConnections - limited) * lastStreamLimit
        connectionCapacity = capacity
        statistics.streamCapacity = pacing.allowed(capacity: capacity)
        return statistics
    }

    // MARK: Requests

    /// A new request joined the back of the queue.
    mutating func submitted() {
        queued += 1
    }

    /// The next step of a dispatch pass: call until `.none`. Hands queued requests to the
    /// least-loaded connection with room, within the pacing ceiling; opens another connection when
    /// none has room.
    mutating func nextDispatch(now: ContinuousClock.Instant) -> Action {
        guard queued > 0, !shuttingDown else { return .none }
        let allowed = pacing.allowed(capacity: .max)
        // Requests held back by the pacing need no other connection: the server is slow, not full.
        if allowed != .max, streamsInFlight >= allowed { return .none }
        if let index = leastLoadedWithRoom() {
            guard case .ready(var ready) = connections[index].slot else { return .none }
            ready.inFlight += 1
            ready.room -= 1
            ready.lastRequest = StoredInstant(now)
            connections[index].slot = .ready(ready)
            queued -= 1
            return .dispatch(to: connections[index].id)
        }
        return openConnectionIfAllowed(now: now)
    }

    private func leastLoadedWithRoom() -> Int? {
        var best: Int?
        var bestLoad = Int.max
        for index in connections.indices {
            guard case .ready(let ready) = connections[index].slot, ready.room > 0, ready.inFlight < bestLoad else { continue }
            best = index
            bestLoad = ready.inFlight
        }
        return best
    }

    /// One connection attempt at a time, never more than `maxConnections` that are not draining, and
    /// not before the backoff after a failure has passed.
    private mutating func openConnectionIfAllowed(now: ContinuousClock.Instant) -> Action {
        var active = 0
        for connection in connections {
            switch connection.slot {
            case .opening: return .none
            case .ready: active += 1
            case .draining: break
            }
        }
        guard active < parameters.maxConnections else { return .none }
        if let connectNotBefore, now < connectNotBefore { return .none }
        nextConnectionID += 1
        connections.append(Connection(id: nextConnectionID, slot: .opening))
        return .openConnection(nextConnectionID)
    }

    /// The connection could not open the stream `.dispatch` asked for (stream ids exhausted): the
    /// request goes back to the front of the queue, and the connection drains.
    mutating func dispatchFailed(_ id: ConnectionID) {
        queued += 1
        guard let index = index(of: id), case .ready(let ready) = connections[index].slot else {
            return assertionFailure("a dispatch went to a connection that was ready")
        }
        connections[index].slot = .draining(inFlight: ready.inFlight - 1)
    }

    /// A request timed out; `queued` if it was still waiting (it never reached a connection),
    /// otherwise it was on the wire and its stream is being reset.
    mutating func requestTimedOut(queued wasQueued: Bool, now: ContinuousClock.Instant) -> Action {
        if wasQueued {
            queued -= 1
            return .none
        }
        return paced(pacing.timedOut(inFlight: streamsInFlight, now: now))
    }

    /// A request's stream closed on a connection; `answeredAfter` when a response arrived.
    /// `demandHeldBack`: the pool's caller holds requests back because the pool's capacity is full.
    mutating func streamClosed(_ id: ConnectionID, answeredAfter latency: Duration?, demandHeldBack: Bool = false,
                               now: ContinuousClock.Instant) -> Action {
        guard let index = index(of: id) else {
            assertionFailure("streams close only on connections the pool still holds")
            return .none
        }
        switch connections[index].slot {
        case .ready(var ready):
            ready.inFlight -= 1
            connections[index].slot = .ready(ready)
        case .draining(let inFlight):
            connections[index].slot = .draining(inFlight: inFlight - 1)
        case .opening:
            assertionFailure("no stream opens before a connection is ready")
            return .none
        }
        guard let latency else { return .none }
        // The answered stream counts as in flight: the pace is judged by what was on the wire.
        return paced(pacing.answered(after: latency, inFlight: streamsInFlight + 1, capacity: connectionCapacity,
                                     demandHeldBack: demandHeldBack, now: now))
    }

    /// REFUSED_STREAM or above a GOAWAY's last stream id: the server did not process it. `refusals`
    /// counts this one.
    mutating func refused(refusals: Int) -> Action {
        guard refusals <= Self.maximumResubmissions, !shuttingDown else { return .failRefused }
        queued += 1
        return .requeue
    }

    private func paced(_ change: StreamPacing.Change?) -> Action {
        change.map(Action.paced) ?? .none
    }

    // MARK: Connections

    /// Read from each usable connection at the start of every pass: its room depends on the clock
    /// (the request rate), so it is read rather than reported.
    mutating func connectionRoom(_ id: ConnectionID, room: Int, streamLimit: Int?) {
        guard let index = index(of: id), case .ready(var ready) = connections[index].slot else {
            return assertionFailure("only ready connections report room")
        }
        ready.room = room
        ready.streamLimit = streamLimit
        connections[index].slot = .ready(ready)
    }

    mutating func connectionReady(_ id: ConnectionID, now: ContinuousClock.Instant) {
        backoff.reset()
        connectNotBefore = nil
        guard let index = index(of: id), connections[index].slot == .opening else {
            return assertionFailure("a connection becomes ready once, after opening")
        }
        connections[index].slot = .ready(Ready(lastRequest: StoredInstant(now)))
    }

    /// GOAWAY: streams in flight finish, none start.
    mutating func goAwayReceived(_ id: ConnectionID) {
        guard let index = index(of: id) else {
            return assertionFailure("GOAWAY arrives only on connections the pool still holds")
        }
        switch connections[index].slot {
        case .ready(let ready):
            connections[index].slot = .draining(inFlight: ready.inFlight)
        case .draining:
            // A server's graceful shutdown sends two GOAWAYs; an idle close may cross one.
            break
        case .opening:
            assertionFailure("no GOAWAY before the session exists")
        }
    }

    /// Set-up (resolve, TCP, proxy, TLS) failed: nothing was sent on it. `jitter` scales the
    /// backoff (0.5...1).
    mutating func connectFailed(_ id: ConnectionID, now: ContinuousClock.Instant,
                                jitter: Double = .random(in: 0.5 ... 1)) -> Action {
        if let index = index(of: id) {
            assert(connections[index].slot == .opening, "only an opening connection fails to connect")
            connections.remove(at: index)
        }
        // Closing the pool closes connections that are still opening: no backoff, the queue fails anyway.
        guard !shuttingDown else { return .none }
        let delay = backoff.next { _ in jitter }
        connectNotBefore = now + delay
        let alternative = connections.contains { connection in
            switch connection.slot {
            case .opening, .ready: true
            case .draining: false
            }
        }
        if alternative { return .backOff(retryIn: delay) }
        queued = 0
        return .backOffAndFailQueued(retryIn: delay)
    }

    /// A connection that was ready closed (any cause); `unsent` requests never left it.
    mutating func connectionClosed(_ id: ConnectionID, unsent: Int) -> Action {
        if let index = index(of: id) {
            assert(connections[index].slot != .opening, "an opening connection reports connectFailed")
            connections.remove(at: index)
        } else {
            assertionFailure("a connection closes once")
        }
        guard unsent > 0 else { return .none }
        if shuttingDown { return .failUnsent }
        queued += unsent
        return .requeue
    }

    // MARK: Timers

    /// Idle close: call until `.none`. Closes connections without a request for `idleTimeout`,
    /// keeping `minConnections`.
    mutating func tick(now: ContinuousClock.Instant) -> Action {
        guard !shuttingDown, usableConnections > parameters.minConnections else { return .none }
        for index in connections.indices {
            guard let deadline = idleDeadline(connections[index].slot), now >= deadline else { continue }
            connections[index].slot = .draining(inFlight: 0)
            return .closeIdle(connections[index].id)
        }
        return .none
    }

    // MARK: Shutdown

    /// Every connection closes and everything not yet answered fails; later refusals and unsent
    /// requests fail too.
    mutating func shutdown() -> Action {
        guard !shuttingDown else { return .none }
        shuttingDown = true
        queued = 0
        return .shutDown
    }

    private func index(of id: ConnectionID) -> Int? {
        connections.firstIndex { $0.id == id }
    }
}
