import PushCore

/// The AMQP owner thread's decisions, as one value: the connection's phase (disconnected until
/// its next attempt, connecting, connected, closing), the consumers (`ConsumerTable`), the acks and
/// confirms of the live connection (`ConnectionPolicy`, one per connected phase, so a new
/// connection starts clean by construction), the admin requests held while a consumer change is in
/// flight, which broker node is next and the reconnect backoff.
///
/// `ConnectionLoop` reads commands and frames, feeds them here as events and performs the
/// `Action`s it gets back, in order; it decides nothing. Time is passed in. Publishes and admin
/// requests are the callers' requests, which the machine only hands back: it never calls their
/// completions, so whole lose-and-reconnect scenarios are tested as values. (It is not generic
/// over them: copies of a generic phase went through runtime metadata on every event,
/// docs/evidence/code-measurements.md#amqp-connection-machine.)
struct ConnectionMachine {
    typealias Publish = PublishRequest
    typealias Admin = AdminCommand
    typealias Instant = ContinuousClock.Instant
    typealias Policy = ConnectionPolicy<Publish>
    typealias Settled = Policy.Settled
    typealias AckFrame = Policy.AckFrame

    enum Phase {
        /// No connection: the next attempt goes to `rotation.current` at `reconnectAt`. `cause`:
        /// why the last connection ended or attempt failed (nil before the first).
        case disconnected(reconnectAt: StoredInstant, cause: AMQPError?)
        /// A connection to this node is being made: it counts once the topology is declared and
        /// the consumers are started.
        case connecting(AMQPEndpoint)
        /// Up, counted from 1: a delivery tag is valid on its own connection only.
        case connected(generation: UInt64)
        /// shutdown(): the last acks and cancels go out on the connection, if there is one.
        case closing(generation: UInt64?)
    }

    /// What belongs to one connection (used while connected, or closing on it): made new when a
    /// connection counts and taken when it ends, so a new connection starts clean by construction.
    /// Beside the phase rather than in its case so that the events of every job mutate it in place
    /// (an enum's payload, or an optional's, is copied out and back through value witnesses:
    /// measured, docs/evidence/code-measurements.md#amqp-connection-machine).
    struct Live {
        var policy: Policy
        /// Admin requests that arrived while a consume or cancel was in flight, in order: they run
        /// on its answer, so they see every consumer change asked before them.
        var heldAdmin: [Admin] = []
    }

    // Set by the machine's events only (its extensions live in other files).
    var phase: Phase
    /// The current connection's; empty while there is none (`liveGeneration` is nil).
    var live: Live
    var consumers = ConsumerTable()
    /// UInt64: one per connection made, never near its end.
    private(set) var generation: UInt64 = 0
    /// Counts openings of the admin channel: a held message's tag is valid only on the opening
    /// that took it (`AMQPHeldMessage`). UInt64, as `generation`.
    private(set) var adminChannelOpenings: UInt64 = 0
    private(set) var rotation: EndpointRotation
    private var backoff: Backoff
    let timing: ConnectionTiming

    init(rotation: EndpointRotation, reconnectDelay: ClosedRange<Duration>, timing: ConnectionTiming = .init(), now: Instant) {
        self.rotation = rotation
        self.backoff = Backoff(range: reconnectDelay)
        self.timing = timing
        self.phase = .disconnected(reconnectAt: StoredInstant(now), cause: nil)
        self.live = Live(policy: Policy(timing: timing))
    }

    /// The generation of the connection that is up, nil while none is.
    var connectedGeneration: UInt64? {
        if case .connected(let generation) = phase { return generation }
        return nil
    }

    /// The generation whose deliveries may still be settled: connected, or closing on it.
    var liveGeneration: UInt64? {
        switch phase {
        case .connected(let generation): generation
        case .closing(let generation): generation
        case .disconnected, .connecting: nil
        }
    }

    var isConnected: Bool { connectedGeneration != nil }

    /// What publishes and admin requests fail with while there is no connection.
    var notConnectedError: AMQPError {
        let cause: AMQPError? = if case .disconnected(_, let cause) = phase { cause } else { nil }
        return AMQPError(code: cause?.code == .invalidURL ? .invalidURL : .connectionLost, status: cause?.status,
                         message: "not connected to the broker" + (cause.map { ": \($0.message)" } ?? ""))
    }

    // MARK: Connecting

    /// When the next connect attempt is due (nil unless disconnected).
    var reconnectAt: Instant? {
        if case .disconnected(let at, _) = phase { return at.instant }
        return nil
    }

    /// The next connect attempt, if it is due: `.connect(node)`.
    mutating func attemptDue(now: Instant) -> Action? {
        guard let reconnectAt, now >= reconnectAt else { return nil }
        phase = .connecting(rotation.current)
        return .connect(rotation.current)
    }

    /// The connection is open and the topology declared: the consumers to start on it, before
    /// it counts as up (`established()`), so no delivery reaches a handler before that.
    mutating func opened() -> [Action] {
        guard case .connecting = phase else {
            assertionFailure("opened() while \(phase)")
            return []
        }
        return consumers.connectionEnded().compactMap { start($0) }
    }

    /// The consumers were started: the connection counts.
    mutating func established() -> Action {
        guard case .connecting = phase else {
            assertionFailure("established() while \(phase)")
            return .flush
        }
        generation += 1
        backoff.reset()
        phase = .connected(generation: generation)
        _ = takeLive()
        return .reportConnected(generation: generation)
    }

    /// The attempt failed: the next one goes to another node, after the backoff.
    mutating func connectFailed(_ error: AMQPError, now: Instant) -> Action {
        _ = consumers.connectionEnded()
        let delay = scheduleReconnect(now: now, cause: error)
        return .reportConnectFailed(error, reconnectIn: delay)
    }

    /// The connection broke (or was dropped): its outstanding and held publishes fail (they may or
    /// may not have been stored: the callers treat them as not published), its unacked deliveries
    /// are forgotten (the broker requeues them), the held admin requests fail, and the consumers
    /// start again on the next connection, which goes to another node after the backoff.
    mutating func lost(_ error: AMQPError, now: Instant) -> [Action] {
        guard case .connected = phase else {
            assertionFailure("lost() while \(phase)")
            return []
        }
        var connection = takeLive()
        let lostBeforeConfirm = AMQPError(code: .connectionLost, status: error.status,
                                          message: "connection lost before the broker confirmed: \(error.message)")
        let failed = connection.policy.reset(failingWith: lostBeforeConfirm)
        _ = consumers.connectionEnded()
        let delay = scheduleReconnect(now: now, cause: lostBeforeConfirm)
        let notConnected = notConnectedError
        phase = .disconnected(reconnectAt: StoredInstant(now + delay), cause: error)
        var actions: [Action] = failed.isEmpty ? [] : [.complete(failed)]
        actions += connection.heldAdmin.map { .failAdmin($0, notConnected) }
        actions.append(.reportDisconnected(error, reconnectIn: delay))
        return actions
    }

    private mutating func scheduleReconnect(now: Instant, cause: AMQPError) -> Duration {
        // The node may be gone: the next attempt goes to another one of the cluster.
        rotation.failed()
        let delay = backoff.next()
        phase = .disconnected(reconnectAt: StoredInstant(now + delay), cause: cause)
        return delay
    }

    mutating func adminChannelOpened() {
        adminChannelOpenings += 1
    }

    // MARK: Closing

    /// shutdown(): from here publishes and admin requests fail, acks still go out.
    mutating func stopRequested() {
        switch phase {
        case .connected(let generation): phase = .closing(generation: generation)
        case .closing: break
        case .disconnected, .connecting: phase = .closing(generation: nil)
        }
    }

    /// The last writes on the connection: every pending ack, then a cancel for each running
    /// consumer (settled acks first, so none is lost to the cancel).
    mutating func closingWrites() -> [Action] {
        guard case .closing(_?) = phase else { return [] }
        var actions: [Action] = []
        let acks = live.policy.allAcks()
        if !acks.isEmpty { actions.append(.sendAcks(acks)) }
        actions.append(.flush)
        for tag in consumers.stopAll() {
            if let wireTag = consumers[tag]?.wireTag { actions.append(.cancelConsumer(wireTag: wireTag)) }
        }
        return actions
    }

    /// The end: what is still outstanding fails with `error`.
    mutating func closed(_ error: AMQPError) -> [Action] {
        guard case .closing(_?) = phase else { return [] }
        phase = .closing(generation: nil)
        var ended = takeLive()
        let failed = ended.policy.reset(failingWith: error)
        var actions: [Action] = failed.isEmpty ? [] : [.complete(failed)]
        actions += ended.heldAdmin.map { .failAdmin($0, error) }
        return actions
    }

    /// The ended connection's, leaving a clean one for the next.
    private mutating func takeLive() -> Live {
        defer { live = Live(policy: Policy(timing: timing)) }
        return live
    }

    // MARK: Time

    /// One turn of the loop is done: acks due, confirms overdue or a silent broker, and whether
    /// buffered frames go out now (`ConnectionPolicy.write`).
    mutating func turnEnded(idle: Bool, hasBufferedFrames: Bool, now: Instant) -> [Action] {
        guard case .connected = phase else { return [] }
        var actions: [Action] = []
        let acks = live.policy.dueAcks(now: now, prefetches: consumers.activePrefetches)
        if !acks.isEmpty { actions.append(.sendAcks(acks)) }
        switch live.policy.checkConfirms(now: now) {
        case .fine: break
        case .expired(let settled): actions.append(.completeOverdue(settled))
        case .brokerSilent(let error): actions.append(.drop(error))
        }
        if live.policy.write(idle: idle, hasBufferedFrames: hasBufferedFrames, now: now) == .now {
            actions.append(.flush)
        }
        return actions
    }

    /// How long an idle loop may wait for the socket: `base`, less when acks or coalesced frames
    /// are due sooner.
    func pollTimeout(base: Int32, now: Instant) -> Int32 {
        liveGeneration == nil ? base : live.policy.pollTimeout(base: base, now: now)
    }

    // MARK: Consumers

    /// basic.qos and basic.consume for `tag` under a fresh wire tag.
    mutating func start(_ tag: String) -> Action? {
        guard let consumer = consumers[tag], let wireTag = consumers.starting(tag) else { return nil }
        return .startConsumer(queue: consumer.queue, wireTag: wireTag, prefetch: consumer.prefetch)
    }

    func cancel(_ tag: String) -> Action? {
        consumers[tag]?.wireTag.map { .cancelConsumer(wireTag: $0) }
    }
}
