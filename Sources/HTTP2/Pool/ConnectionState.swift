import PushCore

/// The decisions of one HTTP/2 connection, apart from its I/O: the set-up phase, draining, how many
/// streams it may open, and its timers (set-up deadline, idle PING and its ACK deadline, idle
/// close). `Connection` feeds it events and performs the actions it returns, so every rule here is
/// tested with explicit instants, without sockets or a clock. What exists only once the connection
/// is ready (streams, draining, the peer's limit, the PING) lives in `Stage.ready`.
struct ConnectionState {
    /// The stage without its data: for logs, errors and the caller's switches.
    enum Phase: Equatable, Sendable {
        /// getaddrinfo runs on a helper thread (see `Resolver`); no socket yet.
        case resolving
        case connecting
        case proxyWriting
        case proxyReading
        case tlsHandshake
        case ready
        case closed
    }

    /// The configuration values the decisions depend on.
    struct Parameters: Equatable, Sendable {
        /// Local cap on concurrent streams.
        var maxStreams: Int
        var viaProxy: Bool
        /// Resolve, TCP connect, proxy CONNECT and TLS handshake together.
        var connectTimeout: Duration
        /// Nothing received for this long: send a PING.
        var pingInterval: Duration
        /// No PING ACK within this long: the peer is gone.
        var pingTimeout: Duration
        /// No request for this long: the pool may close the connection.
        var idleTimeout: Duration
        /// Requests started in any one second at most (nil: no limit).
        var maxRequestsPerSecond: Int?

        init(maxStreams: Int, viaProxy: Bool, connectTimeout: Duration, pingInterval: Duration,
             pingTimeout: Duration, idleTimeout: Duration, maxRequestsPerSecond: Int? = nil) {
            self.maxStreams = maxStreams
            self.viaProxy = viaProxy
            self.connectTimeout = connectTimeout
            self.pingInterval = pingInterval
            self.pingTimeout = pingTimeout
            self.idleTimeout = idleTimeout
            self.maxRequestsPerSecond = maxRequestsPerSecond
        }

        init(configuration: HTTP2ClientConfiguration) {
            self.init(maxStreams: configuration.maxStreamsPerConnection, viaProxy: configuration.proxy != nil,
                      connectTimeout: configuration.connectTimeout, pingInterval: configuration.idlePingInterval,
                      pingTimeout: configuration.requestTimeout, idleTimeout: configuration.idleConnectionTimeout,
                      maxRequestsPerSecond: configuration.maxRequestsPerSecondPerConnection)
        }
    }

    enum CloseReason: Equatable, Sendable {
        /// Set-up did not finish by the connect deadline (in this phase).
        case connectTimedOut(Phase)
        case pingUnanswered
    }

    enum Action: Equatable, Sendable {
        case none
        /// Addresses are known: open a socket to the first one that takes it.
        case connect
        /// TCP is up and a proxy is configured: send the CONNECT request.
        case writeProxyRequest
        /// TCP (or the proxy tunnel) is up: start the TLS handshake.
        case startTLS
        /// The connection can take requests: tell the pool.
        case reportReady
        /// Queue a PING on the session.
        case sendPing
        /// GOAWAY received: the connection drains; tell the pool.
        case reportGoAway
        /// A ready connection closes on its own terms: send GOAWAY(NO_ERROR) and flush before closing.
        case sendGoAway
        /// Close the connection (which then reports `closed()`).
        case close(CloseReason)
    }

    /// What closing means for the requests and the pool.
    enum CloseAction: Equatable, Sendable {
        /// Already closed.
        case none
        /// Closed during set-up: nothing was sent on it.
        case reportConnectFailure
        /// Closed while ready: fail the streams the server may have seen, hand back the rest.
        case releaseStreams
    }

    /// Where the connection is; what applies only once it is ready lives in `Ready`.
    enum Stage: Equatable, Sendable {
        /// getaddrinfo runs on a helper thread (see `Resolver`); no socket yet.
        case resolving
        case connecting
        case proxyWriting
        case proxyReading
        case tlsHandshake
        case ready(Ready)
        case closed
    }

    /// A ready connection: its session's stream limits, its streams and its timers.
    struct Ready: Equatable, Sendable {
        /// GOAWAY received or sent, or no stream id left: no new streams.
        var draining = false
        /// The peer's live SETTINGS_MAX_CONCURRENT_STREAMS; nil until its first SETTINGS.
        var peerMaxConcurrentStreams: Int?
        /// APNs allows one stream until a request got a response.
        var receivedFirstResponse = false
        var openStreams = 0
        /// When the peer was last heard from. Only received bytes count: writes to a peer that is
        /// gone still succeed (into the kernel's buffer) and must not keep the PING away.
        var lastActivity: StoredInstant
        var lastRequest: StoredInstant
        var pingSentAt: StoredInstant?
    }

    /// Until the peer's SETTINGS arrive (nghttp2 assumes the same).
    static let initialPeerMaxConcurrentStreams = 100

    let parameters: Parameters
    let connectDeadline: ContinuousClock.Instant
    private(set) var stage = Stage.resolving
    /// Starts of the streams opened while ready, under `maxRequestsPerSecond`. Beside the stage,
    /// not in `Ready`, so that `Ready` and the stage hold no reference and copy as plain bytes:
    /// they are read several times per request.
    private var rate: RequestRate?

    init(parameters: Parameters, now: ContinuousClock.Instant) {
        self.parameters = parameters
        connectDeadline = now + parameters.connectTimeout
        rate = parameters.maxRequestsPerSecond.map(RequestRate.init(perSecond:))
    }

    // MARK: Queries

    var phase: Phase {
        switch stage {
        case .resolving: .resolving
        case .connecting: .connecting
        case .proxyWriting: .proxyWriting
        case .proxyReading: .proxyReading
        case .tlsHandshake: .tlsHandshake
        case .ready: .ready
        case .closed: .closed
        }
    }

    /// Set only while ready.
    var ready: Ready? {
        guard case .ready(let ready) = stage else { return nil }
        return ready
    }

    var draining: Bool { ready?.draining ?? false }
    var receivedSettings: Bool { ready?.peerMaxConcurrentStreams != nil }
    var receivedFirstResponse: Bool { ready?.receivedFirstResponse ?? false }
    var peerMaxConcurrentStreams: Int { ready?.peerMaxConcurrentStreams ?? Self.initialPeerMaxConcurrentStreams }
    var openStreams: Int { ready?.openStreams ?? 0 }
    var lastActivity: ContinuousClock.Instant? { ready?.lastActivity.instant }
    var lastRequest: ContinuousClock.Instant? { ready?.lastRequest.instant }
    var pingSentAt: ContinuousClock.Instant? { ready?.pingSentAt?.instant }

    var isConnecting: Bool {
        switch stage {
        case .resolving, .connecting, .proxyWriting, .proxyReading, .tlsHandshake: true
        case .ready, .closed: false
        }
    }

    /// Ready and not draining: counts towards the pool's open connections.
    var isUsable: Bool { ready.map { !$0.draining } ?? false }

    /// How many streams may be open at once: min(local cap, the peer's limit), and at most one
    /// until the first response.
    var streamCap: Int {
        max(0, min(receivedFirstResponse ? parameters.maxStreams : 1, peerMaxConcurrentStreams))
    }

    /// min(local cap, the peer's limit) once the peer's SETTINGS are in.
    var streamLimit: Int? {
        ready?.peerMaxConcurrentStreams.map { max(0, min(parameters.maxStreams, $0)) }
    }

    /// A stream may open now: usable, under the stream cap, and under the request rate.
    func canOpenStream(now: ContinuousClock.Instant) -> Bool {
        guard let ready, !ready.draining else { return false }
        return ready.openStreams < streamCap && rate?.allows(now: now) != false
    }

    /// How many streams may open now, one after the other: what `canOpenStream` would allow in a row.
    func room(now: ContinuousClock.Instant) -> Int {
        guard let ready, !ready.draining else { return 0 }
        let free = max(0, streamCap - ready.openStreams)
        guard let rate else { return free }
        return min(free, rate.remaining(now: now))
    }

    /// When the request rate lets the next stream open, while it holds one back now.
    func rateAllowsNextStream(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard let ready, !ready.draining, ready.openStreams < streamCap else { return nil }
        return rate?.nextStart(now: now)
    }

    /// When the pool may close this connection as idle: ready, not draining, no stream open.
    var idleDeadline: ContinuousClock.Instant? {
        guard let ready, !ready.draining, ready.openStreams == 0 else { return nil }
        return ready.lastRequest.instant + parameters.idleTimeout
    }

    /// The earliest instant at which `tick` has something to do.
    var nextDeadline: ContinuousClock.Instant? {
        if isConnecting { return connectDeadline }
        guard let ready else { return nil }
        if let pingSentAt = ready.pingSentAt { return pingSentAt.instant + parameters.pingTimeout }
        return ready.lastActivity.instant + parameters.pingInterval
    }

    // MARK: Set-up
    // Connection calls each set-up event only from the stage it belongs to (it switches on
    // `phase`), and the session events only while a session exists, that is while ready: any other
    // call is a bug, asserted in debug builds and ignored in release.

    mutating func resolved() -> Action {
        guard stage == .resolving else { return notApplicable("resolved") }
        stage = .connecting
        return .connect
    }

    mutating func socketConnected() -> Action {
        guard stage == .connecting else { return notApplicable("socketConnected") }
        if parameters.viaProxy {
            stage = .proxyWriting
            return .writeProxyRequest
        }
        stage = .tlsHandshake
        return .startTLS
    }

    mutating func proxyRequestWritten() {
        guard stage == .proxyWriting else { return _ = notApplicable("proxyRequestWritten") }
        stage = .proxyReading
    }

    mutating func proxyEstablished() -> Action {
        guard stage == .proxyReading else { return notApplicable("proxyEstablished") }
        stage = .tlsHandshake
        return .startTLS
    }

    /// TLS is up with h2 selected and the session exists.
    mutating func handshakeCompleted(now: ContinuousClock.Instant) -> Action {
        guard stage == .tlsHandshake else { return notApplicable("handshakeCompleted") }
        stage = .ready(Ready(lastActivity: StoredInstant(now), lastRequest: StoredInstant(now)))
        return .reportReady
    }

    // MARK: The session

    mutating func settingsReceived(maxConcurrentStreams: Int) {
        updateReady("settingsReceived") { $0.peerMaxConcurrentStreams = maxConcurrentStreams }
    }

    mutating func bytesReceived(now: ContinuousClock.Instant) {
        updateReady("bytesReceived") { $0.lastActivity = StoredInstant(now) }
    }

    mutating func streamOpened(now: ContinuousClock.Instant) {
        updateReady("streamOpened") { ready in
            ready.openStreams += 1
            ready.lastRequest = StoredInstant(now)
        }
        if case .ready = stage { rate?.started(now: now) }
    }

    /// The session could not open a stream (stream ids exhausted).
    mutating func streamOpenFailed() {
        updateReady("streamOpenFailed") { $0.draining = true }
    }

    /// A stream ended; `responded` when it closed normally with a response status.
    mutating func streamClosed(responded: Bool) {
        updateReady("streamClosed") { ready in
            guard ready.openStreams > 0 else { return assertionFailure("a stream closes once, after it opened") }
            ready.openStreams -= 1
            if responded { ready.receivedFirstResponse = true }
        }
    }

    /// A second GOAWAY (a server's graceful shutdown sends two) is reported too.
    mutating func goAwayReceived() -> Action {
        guard case .ready = stage else { return notApplicable("goAwayReceived") }
        updateReady("goAwayReceived") { $0.draining = true }
        return .reportGoAway
    }

    mutating func pingAckReceived() {
        updateReady("pingAckReceived") { $0.pingSentAt = nil }
    }

    // MARK: Timers

    /// Every pass ticks every connection the pool holds, including one that closed since the last
    /// pass (the pool drops it after the timers): closed, nothing is due.
    mutating func tick(now: ContinuousClock.Instant) -> Action {
        if isConnecting {
            return now >= connectDeadline ? .close(.connectTimedOut(phase)) : .none
        }
        guard case .ready(var ready) = stage else { return .none }
        if let pingSentAt = ready.pingSentAt {
            return now - pingSentAt.instant >= parameters.pingTimeout ? .close(.pingUnanswered) : .none
        }
        guard now - ready.lastActivity.instant >= parameters.pingInterval else { return .none }
        ready.pingSentAt = StoredInstant(now)
        stage = .ready(ready)
        return .sendPing
    }

    // MARK: Closing

    /// Idle close or shutdown: a ready connection says GOAWAY first. The caller then closes.
    /// Shutdown closes every connection it holds, also one still setting up (nothing to say) or one
    /// that closed since the last pass (nothing to do).
    mutating func closeGracefully() -> Action {
        guard case .ready = stage else { return .none }
        updateReady("closeGracefully") { $0.draining = true }
        return .sendGoAway
    }

    /// The socket is released (any cause). A connection closes again when shutdown closes one
    /// that already closed since the last pass: nothing left to do.
    mutating func closed() -> CloseAction {
        switch stage {
        case .closed:
            return .none
        case .ready:
            stage = .closed
            return .releaseStreams
        case .resolving, .connecting, .proxyWriting, .proxyReading, .tlsHandshake:
            stage = .closed
            return .reportConnectFailure
        }
    }

    private mutating func updateReady(_ event: StaticString, _ update: (inout Ready) -> Void) {
        guard case .ready(var ready) = stage else { return _ = notApplicable(event) }
        // Out of the enum while it changes, so the payload is not copied on write.
        stage = .closed
        update(&ready)
        stage = .ready(ready)
    }

    private func notApplicable(_ event: StaticString) -> Action {
        assertionFailure("\(event) does not apply in \(phase)")
        return .none
    }
}
