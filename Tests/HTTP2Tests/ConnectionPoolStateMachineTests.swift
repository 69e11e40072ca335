@testable import HTTP2
import Testing

/// The pool's decisions, driven with explicit instants and ids: no sockets, no clock after one
/// base instant.
@Suite struct ConnectionPoolStateMachineTests {
    typealias Machine = ConnectionPoolStateMachine
    typealias Instant = ContinuousClock.Instant

    let t0 = ContinuousClock.now
    static let parameters = Machine.Parameters(
        minConnections: 1, maxConnections: 2, maxStreamsPerConnection: 10, idleTimeout: .seconds(300),
        requestTimeout: .seconds(20), backoff: .milliseconds(100) ... .seconds(2))

    func makeMachine(minConnections: Int = 1, maxConnections: Int = 2) -> Machine {
        var parameters = Self.parameters
        parameters.minConnections = minConnections
        parameters.maxConnections = maxConnections
        return Machine(parameters: parameters)
    }

    /// Opens a connection through a queued request and makes it ready with `room`; the request goes
    /// out on it when `room` allows.
    @discardableResult
    func openReady(_ machine: inout Machine, room: Int, at now: Instant? = nil) -> Machine.ConnectionID {
        let now = now ?? t0
        machine.submitted()
        guard case .openConnection(let id) = machine.nextDispatch(now: now) else {
            Issue.record("expected the machine to open a connection")
            return -1
        }
        machine.connectionReady(id, now: now)
        machine.connectionRoom(id, room: room, streamLimit: room)
        _ = machine.nextDispatch(now: now)
        return id
    }

    // MARK: Dispatch

    @Test func aRequestWithoutAConnectionOpensOneThenGoesOutOnIt() {
        var machine = makeMachine()
        machine.submitted()
        #expect(machine.nextDispatch(now: t0) == .openConnection(1))
        #expect(machine.nextDispatch(now: t0) == .none, "one attempt at a time")
        machine.connectionReady(1, now: t0)
        machine.connectionRoom(1, room: 1, streamLimit: nil)
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: 1))
        #expect(machine.queued == 0)
        #expect(machine.streamsInFlight == 1)
        #expect(machine.nextDispatch(now: t0) == .none)
    }

    @Test func requestsGoToTheLeastLoadedConnectionWithRoom() {
        var machine = makeMachine()
        let first = openReady(&machine, room: 10)
        #expect(machine.streamsInFlight == 1)
        machine.submitted()
        // The first is full for now: the second connection opens and gets the request.
        machine.connectionRoom(first, room: 0, streamLimit: 10)
        guard case .openConnection(let second) = machine.nextDispatch(now: t0) else {
            Issue.record("expected a second connection")
            return
        }
        machine.connectionReady(second, now: t0)
        machine.connectionRoom(first, room: 9, streamLimit: 10)
        machine.connectionRoom(second, room: 10, streamLimit: 10)
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: second))
        // Both carry one: ties go to the oldest, then they alternate.
        for _ in 0..<4 { machine.submitted() }
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: first))
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: second))
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: first))
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: second))
        #expect(machine.streamsInFlight == 6)
        // An answer on the first makes it the least loaded.
        #expect(machine.streamClosed(first, answeredAfter: .milliseconds(5), now: t0) == .none)
        machine.submitted()
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: first))
    }

    @Test func aConnectionTakesNoMoreThanItsRoomInAPass() {
        var machine = makeMachine(maxConnections: 1)
        let id = openReady(&machine, room: 3)
        for _ in 0..<5 { machine.submitted() }
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: id))
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: id))
        #expect(machine.nextDispatch(now: t0) == .none, "no room and no other connection allowed")
        #expect(machine.queued == 3)
        machine.connectionRoom(id, room: 2, streamLimit: 10)
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: id))
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: id))
        #expect(machine.nextDispatch(now: t0) == .none)
        #expect(machine.queued == 1)
    }

    @Test func aFailedDispatchRequeuesTheRequestAndDrainsTheConnection() {
        var machine = makeMachine()
        let first = openReady(&machine, room: 10)
        machine.submitted()
        #expect(machine.nextDispatch(now: t0) == .dispatch(to: first))
        machine.dispatchFailed(first)
        #expect(machine.queued == 1)
        #expect(machine.streamsInFlight == 1)
        #expect(machine.connections.first?.slot == .draining(inFlight: 1))
        // A draining connection counts for no limit: another opens.
        #expect(machine.nextDispatch(now: t0) == .openConnection(2))
    }

    // MARK: Pacing

    @Test func thePacingCeilingHoldsRequestsBackWithoutOpeningConnections() {
        var machine = makeMachine(maxConnections: 4)
        let id = openReady(&machine, room: 1000)
        // Capacity: 1000 on this connection, and as much on each of the three not open.
        #expect(machine.statistics().streamCapacity == 256, "a new pool starts paced")
        #expect(machine.connectionCapacity == 4000)
        for _ in 0..<40 { machine.submitted() }
        for _ in 0..<40 { _ = machine.nextDispatch(now: t0) }
        #expect(machine.streamsInFlight == 41)
        // A slow answer halves the ceiling from what is on the wire.
        let cut = machine.streamClosed(id, answeredAfter: .seconds(6), now: t0 + .seconds(6))
        #expect(cut == .paced(.cut(to: 20)))
        #expect(machine.pacing.ceiling == 20)
        for _ in 0..<10 { machine.submitted() }
        #expect(machine.nextDispatch(now: t0) == .none, "40 on the wire, ceiling 20: held back, no connection opened")
        #expect(machine.connections.count == 1)
        #expect(machine.queued == 10)
        // A ceiling's worth of timely answers at the ceiling raises it by a quarter.
        var raised = Machine.Action.none
        for _ in 0..<20 { raised = machine.streamClosed(id, answeredAfter: .milliseconds(1), now: t0 + .seconds(7)) }
        #expect(raised == .paced(.raised(to: 25)))
        #expect(machine.streamsInFlight == 20)
        var dispatched = 0
        while machine.nextDispatch(now: t0 + .seconds(7)) == .dispatch(to: id) { dispatched += 1 }
        #expect(dispatched == 5)
        #expect(machine.streamsInFlight == 25)
        #expect(machine.queued == 5)
    }

    @Test func aTimeoutOnTheWireCutsTheCeilingAndAQueuedOneOnlyLeavesTheQueue() {
        var machine = makeMachine()
        openReady(&machine, room: 100)
        for _ in 0..<63 { machine.submitted() }
        for _ in 0..<63 { _ = machine.nextDispatch(now: t0) }
        machine.submitted()
        #expect(machine.requestTimedOut(queued: true, now: t0) == .none)
        #expect(machine.queued == 0)
        #expect(machine.requestTimedOut(queued: false, now: t0) == .paced(.cut(to: 32)))
    }

    @Test func statisticsCountConnectionsAndCapacity() {
        var machine = makeMachine(maxConnections: 3)
        let id = openReady(&machine, room: 5)
        machine.connectionRoom(id, room: 4, streamLimit: 5)
        machine.submitted()
        machine.connectionRoom(id, room: 0, streamLimit: 5)
        #expect(machine.nextDispatch(now: t0) == .openConnection(2))
        let statistics = machine.statistics()
        #expect(statistics.open == 1)
        #expect(statistics.connecting == 1)
        #expect(statistics.streamsInFlight == 1)
        #expect(statistics.queued == 1)
        // One connection at 5; the two others get the last limit announced, 5.
        #expect(statistics.streamCapacity == 15)
        #expect(machine.connectionCapacity == 15)
    }

    // MARK: Opening and backoff

    @Test func neverMoreThanMaxConnectionsThatAreNotDraining() {
        var machine = makeMachine(maxConnections: 2)
        let first = openReady(&machine, room: 1)
        let second = openReady(&machine, room: 1)
        #expect(first != second)
        machine.connectionRoom(first, room: 0, streamLimit: 1)
        machine.connectionRoom(second, room: 0, streamLimit: 1)
        machine.submitted()
        #expect(machine.nextDispatch(now: t0) == .none)
        machine.goAwayReceived(first)
        #expect(machine.nextDispatch(now: t0) == .openConnection(3))
    }

    @Test func aFailedAttemptBacksOffAndAReadyConnectionResetsTheBackoff() {
        var machine = makeMachine()
        machine.submitted()
        #expect(machine.nextDispatch(now: t0) == .openConnection(1))
        #expect(machine.connectFailed(1, now: t0, jitter: 1) == .backOffAndFailQueued(retryIn: .milliseconds(100)))
        #expect(machine.queued == 0)
        machine.submitted()
        #expect(machine.nextDeadline() == t0 + .milliseconds(100))
        #expect(machine.nextDispatch(now: t0 + .milliseconds(99)) == .none, "not before the backoff")
        #expect(machine.nextDispatch(now: t0 + .milliseconds(100)) == .openConnection(2))
        #expect(machine.connectFailed(2, now: t0 + .milliseconds(100), jitter: 1) == .backOffAndFailQueued(retryIn: .milliseconds(200)))
        machine.submitted()
        #expect(machine.nextDispatch(now: t0 + .milliseconds(300)) == .openConnection(3))
        machine.connectionReady(3, now: t0 + .milliseconds(300))
        #expect(machine.backoff.attempt == 0)
        #expect(machine.connectNotBefore == nil)
        machine.goAwayReceived(3)
        #expect(machine.nextDispatch(now: t0 + .milliseconds(300)) == .openConnection(4))
        #expect(machine.connectFailed(4, now: t0 + .seconds(1), jitter: 1) == .backOffAndFailQueued(retryIn: .milliseconds(100)))
    }

    @Test func theBackoffIsCappedAndJittered() {
        var machine = makeMachine()
        var last = Duration.zero
        for attempt in 1...8 {
            machine.submitted()
            let now = t0 + .seconds(10 * attempt)
            #expect(machine.nextDispatch(now: now) == .openConnection(attempt))
            guard case .backOffAndFailQueued(let delay) = machine.connectFailed(attempt, now: now, jitter: 1) else {
                Issue.record("expected a backoff")
                return
            }
            last = delay
        }
        #expect(last == .seconds(2))
        machine.submitted()
        #expect(machine.nextDispatch(now: t0 + .seconds(100)) == .openConnection(9))
        #expect(machine.connectFailed(9, now: t0 + .seconds(100), jitter: 0.5) == .backOffAndFailQueued(retryIn: .seconds(1)))
    }

    @Test func theQueueFailsOnlyWithoutAnAlternative() {
        var machine = makeMachine(maxConnections: 2)
        let ready = openReady(&machine, room: 1)
        machine.connectionRoom(ready, room: 0, streamLimit: 1)
        machine.submitted()
        #expect(machine.nextDispatch(now: t0) == .openConnection(2))
        // The ready connection can take the queued request once its stream closes.
        #expect(machine.connectFailed(2, now: t0, jitter: 1) == .backOff(retryIn: .milliseconds(100)))
        #expect(machine.queued == 1)
        // A draining connection is no alternative.
        machine.goAwayReceived(ready)
        #expect(machine.nextDispatch(now: t0 + .seconds(1)) == .openConnection(3))
        #expect(machine.connectFailed(3, now: t0 + .seconds(1), jitter: 1) == .backOffAndFailQueued(retryIn: .milliseconds(200)))
        #expect(machine.queued == 0)
    }

    // MARK: Refusals and closes

    @Test func refusalsGoBackToTheFrontUpToTheLimit() {
        var machine = makeMachine()
        for refusals in 1...Machine.maximumResubmissions {
            #expect(machine.refused(refusals: refusals) == .requeue)
            #expect(machine.queued == refusals)
        }
        #expect(machine.refused(refusals: Machine.maximumResubmissions + 1) == .failRefused)
        #expect(machine.queued == Machine.maximumResubmissions)
    }

    @Test func unsentRequestsOfAClosedConnectionAreRequeued() {
        var machine = makeMachine()
        let id = openReady(&machine, room: 10)
        for _ in 0..<3 { machine.submitted() }
        for _ in 0..<3 { _ = machine.nextDispatch(now: t0) }
        #expect(machine.streamsInFlight == 4)
        #expect(machine.connectionClosed(id, unsent: 2) == .requeue)
        #expect(machine.queued == 2)
        #expect(machine.streamsInFlight == 0)
        #expect(machine.connections.isEmpty)
        #expect(machine.nextDispatch(now: t0) == .openConnection(2))
    }

    @Test func aClosedConnectionWithNothingUnsentNeedsNothing() {
        var machine = makeMachine()
        let id = openReady(&machine, room: 10)
        #expect(machine.connectionClosed(id, unsent: 0) == .none)
        #expect(machine.connections.isEmpty)
        #expect(machine.nextDispatch(now: t0) == .none, "nothing queued: nothing opens")
    }

    @Test func aSecondGoAwayKeepsTheConnectionDraining() {
        var machine = makeMachine()
        let id = openReady(&machine, room: 10)
        machine.goAwayReceived(id)
        machine.goAwayReceived(id)
        #expect(machine.connections.first?.slot == .draining(inFlight: 1))
        #expect(machine.streamClosed(id, answeredAfter: nil, now: t0) == .none)
        #expect(machine.connections.first?.slot == .draining(inFlight: 0))
    }

    // MARK: Idle close

    @Test func idleConnectionsCloseKeepingMinConnections() {
        var machine = makeMachine(minConnections: 1, maxConnections: 3)
        let first = openReady(&machine, room: 1)
        let second = openReady(&machine, room: 1, at: t0 + .seconds(10))
        let third = openReady(&machine, room: 1, at: t0 + .seconds(20))
        #expect(machine.usableConnections == 3)
        #expect(machine.nextDeadline() == nil, "all busy")
        for id in [first, second, third] { _ = machine.streamClosed(id, answeredAfter: .milliseconds(1), now: t0) }
        #expect(machine.nextDeadline() == t0 + .seconds(300))
        #expect(machine.tick(now: t0 + .seconds(300) - .nanoseconds(1)) == .none)
        #expect(machine.tick(now: t0 + .seconds(310)) == .closeIdle(first))
        #expect(machine.tick(now: t0 + .seconds(310)) == .closeIdle(second))
        #expect(machine.tick(now: t0 + .seconds(310)) == .none)
        #expect(machine.tick(now: t0 + .seconds(400)) == .none, "the last one stays: minConnections")
        #expect(machine.nextDeadline() == nil, "a kept connection's idle deadline wakes nobody")
        _ = machine.connectionClosed(first, unsent: 0)
        _ = machine.connectionClosed(second, unsent: 0)
        #expect(machine.connections.map(\.id) == [third])
    }

    @Test func aRequestRestartsTheIdleDeadline() {
        var machine = makeMachine(minConnections: 0, maxConnections: 1)
        let id = openReady(&machine, room: 5)
        _ = machine.streamClosed(id, answeredAfter: .milliseconds(1), now: t0)
        machine.submitted()
        #expect(machine.nextDispatch(now: t0 + .seconds(100)) == .dispatch(to: id))
        #expect(machine.tick(now: t0 + .seconds(350)) == .none, "busy")
        _ = machine.streamClosed(id, answeredAfter: .milliseconds(1), now: t0 + .seconds(101))
        #expect(machine.nextDeadline() == t0 + .seconds(400))
        #expect(machine.tick(now: t0 + .seconds(400)) == .closeIdle(id))
    }

    // MARK: Shutdown

    @Test func shutdownFailsEverythingThatIsLeft() {
        var machine = makeMachine()
        let id = openReady(&machine, room: 10)
        machine.submitted()
        machine.submitted()
        #expect(machine.shutdown() == .shutDown)
        #expect(machine.queued == 0)
        #expect(machine.shutdown() == .none)
        #expect(machine.nextDispatch(now: t0) == .none)
        #expect(machine.refused(refusals: 1) == .failRefused)
        #expect(machine.connectionClosed(id, unsent: 1) == .failUnsent)
        #expect(machine.tick(now: t0 + .seconds(3600)) == .none)
    }

    @Test func attemptsClosedByShutdownDoNotBackOff() {
        var machine = makeMachine()
        machine.submitted()
        #expect(machine.nextDispatch(now: t0) == .openConnection(1))
        _ = machine.shutdown()
        #expect(machine.connectFailed(1, now: t0, jitter: 1) == .none)
        #expect(machine.connectNotBefore == nil)
        #expect(machine.connections.isEmpty)
    }

    @Test func parametersComeFromTheConfiguration() {
        var configuration = HTTP2ClientConfiguration(host: "localhost", port: 443)
        configuration.minConnections = 2
        configuration.maxConnections = 5
        configuration.maxStreamsPerConnection = 7
        configuration.idleConnectionTimeout = .seconds(6)
        configuration.requestTimeout = .seconds(5)
        #expect(Machine.Parameters(configuration: configuration) == Machine.Parameters(
            minConnections: 2, maxConnections: 5, maxStreamsPerConnection: 7, idleTimeout: .seconds(6),
            requestTimeout: .seconds(5), backoff: .milliseconds(100) ... .seconds(2)))
    }
}
