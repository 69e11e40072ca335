/// The decisions of one HTTP/2 connection, apart from its I/O: the set-up phase, draining, how many
/// streams it may open, and its timers (set-up deadline, idle PING and its ACK deadline, idle
/// close). `Connection` feeds it events and performs the actions it returns, so every rule here is
/// tested with explicit instants, without sockets or a clock. Events that do not apply in the
/// current phase change nothing (and return `.none`).
struct ConnectionState {
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

    /// Until the peer's SETTINGS arrive (nghttp2 assumes the same).
    static let initialPeerMaxConcurrentStreams = 100

    let parameters: Parameters
    let connectDeadline: ContinuousClock.Instant
    private(set) var phase = Phase.resolving
    /// GOAWAY received or sent, or no stream id left: no new streams.
    private(set) var draining = false
    private(set) var receivedSettings = false
    /// APNs allows one stream until a request got a response.
    private(set) var receivedFirstResponse = false
    /// The peer's live SETTINGS_MAX_CONCURRENT_STREAMS.
    private(set) var peerMaxConcurrentStreams = initialPeerMaxConcurrentStreams
    private(set) var openStreams = 0
    /// When the peer was last heard from. Only received bytes count: writes to a peer that is gone
    /// still succeed (into the kernel's buffer) and must not keep the PING away.
    private(set) var lastActivity: ContinuousClock.Instant
    private(set) var lastRequest: ContinuousClock.Instant
    private(set) var pingSentAt: ContinuousClock.Instant?
    private(set) var rate: RequestRate?

    init(parameters: Parameters, now: ContinuousClock.Instant) {
        self.parameters = parameters
        connectDeadline = now + parameters.connectTimeout
        rate = parameters.maxRequestsPerSecond.map(RequestRate.init(perSecond:))
        lastActivity = now
        lastRequest = now
    }

    // MARK: Queries

    var isConnecting: Bool {
        switch phase {
        case .resolving, .connecting, .proxyWriting, .proxyReading, .tlsHandshake: true
        case .ready, .closed: false
        }
    }

    /// Ready and not draining: counts towards the pool's open connections.
    var isUsable: Bool { phase == .ready && !draining }

    /// How many streams may be open at once: min(local cap, the peer's limit), and at most one
    /// until the first response.
    var streamCap: Int {
        max(0, min(receivedFirstResponse ? parameters.maxStreams : 1, peerMaxConcurrentStreams))
    }

    /// min(local cap, the peer's limit) once the peer's SETTINGS are in.
    var streamLimit: Int? {
        receivedSettings ? max(0, min(parameters.maxStreams, peerMaxConcurrentStreams)) : nil
    }

    /// A stream may open now: usable, under the stream cap, and under the request rate.
    func canOpenStream(now: ContinuousClock.Instant) -> Bool {
        isUsable && openStreams < streamCap && rate?.allows(now: now) != false
    }

    /// When the request rate lets the next stream open, while it holds one back now.
    func rateAllowsNextStream(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard isUsable, openStreams < streamCap else { return nil }
        return rate?.nextStart(now: now)
    }

    /// When the pool may close this connection as idle: ready, not draining, no stream open.
    var idleDeadline: ContinuousClock.Instant? {
        isUsable && openStreams == 0 ? lastRequest + parameters.idleTimeout : nil
    }

    /// The earliest instant at which `tick` has something to do.
    var nextDeadline: ContinuousClock.Instant? {
        if isConnecting { return connectDeadline }
        guard phase == .ready else { return nil }
        if let pingSentAt { return pingSentAt + parameters.pingTimeout }
        return lastActivity + parameters.pingInterval
    }

    // MARK: Set-up

    mutating func resolved() -> Action {
        guard phase == .resolving else { return .none }
        phase = .connecting
        return .connect
    }

    mutating func socketConnected() -> Action {
        guard phase == .connecting else { return .none }
        if parameters.viaProxy {
            phase = .proxyWriting
            return .writeProxyRequest
        }
        phase = .tlsHandshake
        return .startTLS
    }

    mutating func proxyRequestWritten() {
        guard phase == .proxyWriting else { return }
        phase = .proxyReading
    }

    mutating func proxyEstablished() -> Action {
        guard phase == .proxyReading else { return .none }
        phase = .tlsHandshake
        return .startTLS
    }

    /// TLS is up with h2 selected and the session exists.
    mutating func handshakeCompleted(now: ContinuousClock.Instant) -> Action {
        guard phase == .tlsHandshake else { return .none }
        phase = .ready
        lastActivity = now
        lastRequest = now
        return .reportReady
    }

    // MARK: The session

    mutating func settingsReceived(maxConcurrentStreams: Int) {
        guard phase == .ready else { return }
        peerMaxConcurrentStreams = maxConcurrentStreams
        receivedSettings = true
    }

    mutating func bytesReceived(now: ContinuousClock.Instant) {
        guard phase == .ready else { return }
        lastActivity = now
    }

    mutating func streamOpened(now: ContinuousClock.Instant) {
        guard phase == .ready else { return }
        openStreams += 1
        lastRequest = now
        rate?.started(now: now)
    }

    /// The session could not open a stream (stream ids exhausted).
    mutating func streamOpenFailed() {
        guard phase == .ready else { return }
        draining = true
    }

    /// A stream ended; `responded` when it closed normally with a response status.
    mutating func streamClosed(responded: Bool) {
        guard phase == .ready, openStreams > 0 else { return }
        openStreams -= 1
        if responded { receivedFirstResponse = true }
    }

    mutating func goAwayReceived() -> Action {
        guard phase == .ready else { return .none }
        draining = true
        return .reportGoAway
    }

    mutating func pingAckReceived() {
        guard phase == .ready else { return }
        pingSentAt = nil
    }

    // MARK: Timers

    mutating func tick(now: ContinuousClock.Instant) -> Action {
        if isConnecting {
            return now >= connectDeadline ? .close(.connectTimedOut(phase)) : .none
        }
        guard phase == .ready else { return .none }
        if let pingSentAt {
            return now - pingSentAt >= parameters.pingTimeout ? .close(.pingUnanswered) : .none
        }
        guard now - lastActivity >= parameters.pingInterval else { return .none }
        pingSentAt = now
        return .sendPing
    }

    // MARK: Closing

    /// Idle close or shutdown: a ready connection says GOAWAY first. The caller then closes.
    mutating func closeGracefully() -> Action {
        guard phase == .ready else { return .none }
        draining = true
        return .sendGoAway
    }

    /// The socket is released (any cause).
    mutating func closed() -> CloseAction {
        switch phase {
        case .closed:
            return .none
        case .ready:
            phase = .closed
            openStreams = 0
            pingSentAt = nil
            return .releaseStreams
        case .resolving, .connecting, .proxyWriting, .proxyReading, .tlsHandshake:
            phase = .closed
            return .reportConnectFailure
        }
    }
}
