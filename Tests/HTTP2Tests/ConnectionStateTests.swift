@testable import HTTP2
import Testing

/// The connection's decisions, driven with explicit instants: nothing here waits or reads the clock
/// after taking one base instant.
@Suite struct ConnectionStateTests {
    typealias Instant = ContinuousClock.Instant

    let t0 = ContinuousClock.now
    static let parameters = ConnectionState.Parameters(
        maxStreams: 10, viaProxy: false, connectTimeout: .seconds(10), pingInterval: .seconds(60),
        pingTimeout: .seconds(30), idleTimeout: .seconds(300))

    static let setUpPhases: [ConnectionState.Phase] = [.resolving, .connecting, .proxyWriting, .proxyReading, .tlsHandshake]

    /// A connection in `phase`, created at `t0` (through a proxy, so that every set-up phase is reachable).
    func makeState(in phase: ConnectionState.Phase) -> ConnectionState {
        var parameters = Self.parameters
        parameters.viaProxy = true
        var state = ConnectionState(parameters: parameters, now: t0)
        let steps: [(inout ConnectionState) -> Void] = [
            { _ = $0.resolved() },
            { _ = $0.socketConnected() },
            { $0.proxyRequestWritten() },
            { _ = $0.proxyEstablished() },
            { [t0] in _ = $0.handshakeCompleted(now: t0) },
            { _ = $0.closed() },
        ]
        for step in steps where state.phase != phase { step(&state) }
        #expect(state.phase == phase)
        return state
    }

    /// Ready at `at` without a proxy, with the peer's SETTINGS (limit `peerLimit`) in.
    func makeReady(at: Instant? = nil, peerLimit: Int = 100) -> ConnectionState {
        var state = ConnectionState(parameters: Self.parameters, now: t0)
        _ = state.resolved()
        _ = state.socketConnected()
        _ = state.handshakeCompleted(now: at ?? t0)
        state.settingsReceived(maxConcurrentStreams: peerLimit)
        return state
    }

    // MARK: Set-up

    @Test func setUpWithoutProxyGoesFromResolvingToReady() {
        var state = ConnectionState(parameters: Self.parameters, now: t0)
        #expect(state.phase == .resolving)
        #expect(state.isConnecting)
        #expect(!state.canOpenStream(now: t0))
        #expect(state.resolved() == .connect)
        #expect(state.phase == .connecting)
        #expect(state.socketConnected() == .startTLS)
        #expect(state.phase == .tlsHandshake)
        let readyAt = t0 + .seconds(2)
        #expect(state.handshakeCompleted(now: readyAt) == .reportReady)
        #expect(state.phase == .ready)
        #expect(!state.isConnecting)
        #expect(state.isUsable)
        #expect(state.lastActivity == readyAt)
        #expect(state.lastRequest == readyAt)
        #expect(state.canOpenStream(now: t0))
    }

    @Test func setUpThroughProxyWritesCONNECTThenReadsTheReply() {
        var parameters = Self.parameters
        parameters.viaProxy = true
        var state = ConnectionState(parameters: parameters, now: t0)
        #expect(state.resolved() == .connect)
        #expect(state.socketConnected() == .writeProxyRequest)
        #expect(state.phase == .proxyWriting)
        state.proxyRequestWritten()
        #expect(state.phase == .proxyReading)
        #expect(state.proxyEstablished() == .startTLS)
        #expect(state.phase == .tlsHandshake)
        #expect(state.handshakeCompleted(now: t0) == .reportReady)
        #expect(state.phase == .ready)
    }

    @Test func parametersComeFromTheConfiguration() {
        var configuration = HTTP2ClientConfiguration(host: "localhost", port: 443)
        configuration.maxStreamsPerConnection = 7
        configuration.connectTimeout = .seconds(3)
        configuration.idlePingInterval = .seconds(4)
        configuration.requestTimeout = .seconds(5)
        configuration.idleConnectionTimeout = .seconds(6)
        #expect(ConnectionState.Parameters(configuration: configuration) == ConnectionState.Parameters(
            maxStreams: 7, viaProxy: false, connectTimeout: .seconds(3), pingInterval: .seconds(4),
            pingTimeout: .seconds(5), idleTimeout: .seconds(6)))
        configuration.proxy = HTTPProxy(host: "proxy", port: 3128)
        #expect(ConnectionState.Parameters(configuration: configuration).viaProxy)
    }

    // MARK: What exists only once ready

    // Set-up events out of order and session events outside `.ready` are bugs of the caller:
    // they are assertions now, so they are not driven here.

    @Test(arguments: ConnectionStateTests.setUpPhases)
    func setUpStagesCarryNoSessionState(phase: ConnectionState.Phase) {
        var state = makeState(in: phase)
        #expect(state.ready == nil)
        #expect(!state.receivedSettings && !state.receivedFirstResponse && !state.draining)
        #expect(state.openStreams == 0)
        #expect(state.lastRequest == nil)
        #expect(state.lastActivity == nil)
        #expect(state.pingSentAt == nil)
        #expect(state.peerMaxConcurrentStreams == ConnectionState.initialPeerMaxConcurrentStreams)
        #expect(state.streamLimit == nil)
        #expect(!state.canOpenStream(now: t0))
        #expect(state.room(now: t0) == 0)
        #expect(state.idleDeadline == nil)
        #expect(state.rateAllowsNextStream(now: t0) == nil)
        // Shutdown closes connections still setting up: nothing to say on them.
        #expect(state.closeGracefully() == .none)
        #expect(state.phase == phase)
    }

    /// The pool ticks and closes (at shutdown) a connection that closed since its last pass.
    @Test func aClosedConnectionTicksAndClosesAgainWithoutEffect() {
        var state = makeReady()
        state.streamOpened(now: t0)
        #expect(state.closed() == .releaseStreams)
        #expect(state.closed() == .none)
        #expect(state.closeGracefully() == .none)
        #expect(state.tick(now: t0 + .seconds(3600)) == .none)
        #expect(state.phase == .closed)
        #expect(state.ready == nil)
        #expect(state.openStreams == 0)
        #expect(!state.canOpenStream(now: t0))
        #expect(state.room(now: t0) == 0)
        #expect(state.nextDeadline == nil)
        #expect(state.idleDeadline == nil)
    }

    // MARK: Connect deadline

    @Test(arguments: ConnectionStateTests.setUpPhases)
    func setUpTimesOutAtTheConnectDeadline(phase: ConnectionState.Phase) {
        var state = makeState(in: phase)
        #expect(state.connectDeadline == t0 + .seconds(10))
        #expect(state.nextDeadline == state.connectDeadline)
        #expect(state.tick(now: t0 + .seconds(10) - .nanoseconds(1)) == .none)
        #expect(state.tick(now: t0 + .seconds(10)) == .close(.connectTimedOut(phase)))
        #expect(state.phase == phase, "the caller closes, then reports closed()")
        #expect(state.closed() == .reportConnectFailure)
        #expect(state.phase == .closed)
    }

    @Test func aReadyConnectionHasNoConnectDeadline() {
        var state = makeReady(at: t0 + .seconds(9))
        #expect(state.nextDeadline == t0 + .seconds(69))
        #expect(state.tick(now: t0 + .seconds(30)) == .none)
        #expect(state.phase == .ready)
    }

    // MARK: PING

    @Test func aPingGoesOutAfterTheIntervalWithoutReceivedBytes() {
        var state = makeReady()
        #expect(state.tick(now: t0 + .seconds(59)) == .none)
        state.bytesReceived(now: t0 + .seconds(30))
        #expect(state.nextDeadline == t0 + .seconds(90))
        #expect(state.tick(now: t0 + .seconds(89)) == .none)
        #expect(state.tick(now: t0 + .seconds(90)) == .sendPing)
        #expect(state.pingSentAt == t0 + .seconds(90))
        // One PING at a time; now its ACK deadline counts.
        #expect(state.nextDeadline == t0 + .seconds(120))
        #expect(state.tick(now: t0 + .seconds(100)) == .none)
    }

    @Test func anUnansweredPingClosesTheConnection() {
        var state = makeReady()
        #expect(state.tick(now: t0 + .seconds(60)) == .sendPing)
        // Other frames do not stand in for the ACK.
        state.bytesReceived(now: t0 + .seconds(70))
        #expect(state.tick(now: t0 + .seconds(90) - .nanoseconds(1)) == .none)
        #expect(state.tick(now: t0 + .seconds(90)) == .close(.pingUnanswered))
        #expect(state.closed() == .releaseStreams)
        #expect(state.pingSentAt == nil)
    }

    @Test func aPingAckRestartsTheInterval() {
        var state = makeReady()
        #expect(state.tick(now: t0 + .seconds(60)) == .sendPing)
        state.bytesReceived(now: t0 + .seconds(61))
        state.pingAckReceived()
        #expect(state.pingSentAt == nil)
        #expect(state.nextDeadline == t0 + .seconds(121))
        #expect(state.tick(now: t0 + .seconds(95)) == .none)
        #expect(state.tick(now: t0 + .seconds(121)) == .sendPing)
    }

    /// Requests written to a peer that is gone still succeed into the kernel's buffer: only what
    /// arrives shows the peer is there, so a connection that only sends is PINGed on time.
    @Test func sendingRequestsDoesNotDelayThePing() {
        var state = makeReady()
        for second in stride(from: 5, through: 55, by: 10) {
            state.streamOpened(now: t0 + .seconds(second))
        }
        #expect(state.tick(now: t0 + .seconds(60)) == .sendPing)
        #expect(state.tick(now: t0 + .seconds(90)) == .close(.pingUnanswered))
    }

    // MARK: Stream capacity

    @Test func oneStreamUntilTheFirstResponseThenTheLowerOfBothLimits() {
        var state = makeReady(peerLimit: 100)
        #expect(state.streamLimit == 10)
        #expect(state.streamCap == 1)
        state.streamOpened(now: t0)
        #expect(!state.canOpenStream(now: t0))
        // A refused or reset stream is no response.
        state.streamClosed(responded: false)
        #expect(state.streamCap == 1)
        state.streamOpened(now: t0)
        state.streamClosed(responded: true)
        #expect(state.receivedFirstResponse)
        #expect(state.streamCap == 10)
        #expect(state.room(now: t0) == 10)
        for _ in 0..<10 {
            #expect(state.canOpenStream(now: t0))
            state.streamOpened(now: t0)
        }
        #expect(!state.canOpenStream(now: t0))
    }

    @Test func aLoweredPeerLimitStopsNewStreamsUntilEnoughClose() {
        var state = makeReady(peerLimit: 100)
        state.streamOpened(now: t0)
        state.streamClosed(responded: true)
        for _ in 0..<5 { state.streamOpened(now: t0) }
        state.settingsReceived(maxConcurrentStreams: 2)
        #expect(state.streamCap == 2)
        #expect(state.streamLimit == 2)
        #expect(!state.canOpenStream(now: t0))
        for _ in 0..<3 { state.streamClosed(responded: true) }
        #expect(state.openStreams == 2)
        #expect(!state.canOpenStream(now: t0))
        state.streamClosed(responded: true)
        #expect(state.canOpenStream(now: t0))
        // Raised above the local cap: the local cap holds.
        state.settingsReceived(maxConcurrentStreams: 1000)
        #expect(state.streamCap == 10)
        #expect(state.streamLimit == 10)
    }

    @Test func noStreamLimitBeforeThePeersSettings() {
        var state = ConnectionState(parameters: Self.parameters, now: t0)
        _ = state.resolved()
        _ = state.socketConnected()
        _ = state.handshakeCompleted(now: t0)
        #expect(state.streamLimit == nil)
        #expect(state.streamCap == 1)
        state.settingsReceived(maxConcurrentStreams: 4)
        #expect(state.receivedSettings)
        #expect(state.streamLimit == 4)
    }

    /// SETTINGS_MAX_CONCURRENT_STREAMS 0 allows no stream at all, also before the first response.
    @Test func aPeerLimitOfZeroAllowsNoStreamEvenBeforeTheFirstResponse() {
        var state = makeReady(peerLimit: 0)
        #expect(state.streamCap == 0)
        #expect(state.streamLimit == 0)
        #expect(!state.canOpenStream(now: t0))
        state.settingsReceived(maxConcurrentStreams: 3)
        #expect(state.streamCap == 1)
        #expect(state.canOpenStream(now: t0))
    }

    // MARK: Draining

    @Test func goAwayDrainsWhileStreamsInFlightFinish() {
        var state = makeReady()
        state.streamOpened(now: t0)
        state.streamClosed(responded: true)
        for _ in 0..<3 { state.streamOpened(now: t0 + .seconds(1)) }
        #expect(state.goAwayReceived() == .reportGoAway)
        #expect(state.draining)
        #expect(!state.isUsable)
        #expect(!state.canOpenStream(now: t0))
        #expect(state.phase == .ready, "streams in flight still get their responses")
        state.streamClosed(responded: true)
        state.streamClosed(responded: false)
        state.streamClosed(responded: true)
        #expect(state.openStreams == 0)
        #expect(!state.canOpenStream(now: t0))
        #expect(state.idleDeadline == nil, "the session ends it, not the idle close")
        // A second GOAWAY (the graceful sequence) is reported too.
        #expect(state.goAwayReceived() == .reportGoAway)
        // The PING still watches a draining connection.
        #expect(state.tick(now: t0 + .seconds(61)) == .sendPing)
        #expect(state.closed() == .releaseStreams)
    }

    @Test func noStreamIdLeftDrains() {
        var state = makeReady()
        state.streamOpenFailed()
        #expect(state.draining)
        #expect(!state.canOpenStream(now: t0))
    }

    @Test func aGracefulCloseSendsGoAwayOnlyWhenReady() {
        var ready = makeReady()
        #expect(ready.closeGracefully() == .sendGoAway)
        #expect(ready.draining)
        #expect(ready.closed() == .releaseStreams)
        var connecting = makeState(in: .tlsHandshake)
        #expect(connecting.closeGracefully() == .none)
        #expect(connecting.closed() == .reportConnectFailure)
        #expect(connecting.closed() == .none)
    }

    // MARK: Idle close

    @Test func theIdleDeadlineCountsFromTheLastRequestWhileNoStreamIsOpen() {
        var state = makeReady(at: t0 + .seconds(1))
        #expect(state.idleDeadline == t0 + .seconds(301))
        state.streamOpened(now: t0 + .seconds(10))
        #expect(state.idleDeadline == nil)
        state.streamClosed(responded: true)
        #expect(state.idleDeadline == t0 + .seconds(310))
        // Received bytes (PING ACKs) keep the PING away, not the idle close.
        state.bytesReceived(now: t0 + .seconds(200))
        #expect(state.idleDeadline == t0 + .seconds(310))
        #expect(state.closeGracefully() == .sendGoAway)
        #expect(state.idleDeadline == nil)
    }

    // MARK: Request rate

    /// At most N streams start in any one second, whatever their answers: the next one waits
    /// until the oldest of the last N started a second ago, and the state says when that is.
    @Test func theRequestRateHoldsBackTheNextStreamForTheRestOfTheSecond() {
        var parameters = Self.parameters
        parameters.maxRequestsPerSecond = 3
        var state = ConnectionState(parameters: parameters, now: t0)
        _ = state.resolved()
        _ = state.socketConnected()
        _ = state.handshakeCompleted(now: t0)
        state.settingsReceived(maxConcurrentStreams: 100)
        state.streamOpened(now: t0)
        state.streamClosed(responded: true)
        let starts = [t0 + .milliseconds(100), t0 + .milliseconds(200)]
        for start in starts {
            #expect(state.canOpenStream(now: start))
            state.streamOpened(now: start)
            state.streamClosed(responded: true)
        }
        let held = t0 + .milliseconds(500)
        #expect(!state.canOpenStream(now: held), "three started within the second")
        #expect(state.room(now: held) == 0)
        #expect(state.room(now: t0 + .milliseconds(1050)) == 1, "the start at t0 left the window")
        #expect(state.room(now: t0 + .milliseconds(1150)) == 2)
        #expect(state.room(now: t0 + .seconds(2)) == 3)
        #expect(state.rateAllowsNextStream(now: held) == t0 + .seconds(1))
        #expect(state.canOpenStream(now: t0 + .seconds(1)))
        state.streamOpened(now: t0 + .seconds(1))
        #expect(!state.canOpenStream(now: t0 + .milliseconds(1050)))
        #expect(state.room(now: t0 + .milliseconds(1050)) == 0)
        #expect(state.rateAllowsNextStream(now: t0 + .milliseconds(1050)) == t0 + .milliseconds(1100))
        #expect(state.canOpenStream(now: t0 + .milliseconds(1100)))
    }

    /// Without a limit nothing is held back for rate, and a stream cap that is full is not a rate wait.
    @Test func noRateLimitMeansNoRateWait() {
        var state = makeReady(peerLimit: 1)
        #expect(state.rateAllowsNextStream(now: t0) == nil)
        state.streamOpened(now: t0)
        state.streamClosed(responded: true)
        state.streamOpened(now: t0)
        #expect(!state.canOpenStream(now: t0))
        #expect(state.rateAllowsNextStream(now: t0) == nil)
    }
}
