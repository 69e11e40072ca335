/// Connection events, fed to the machine; the pool performs what it answers.
extension ConnectionPool: ConnectionDelegate {
    func connectionBecameReady(_ connection: Connection, now: ContinuousClock.Instant) {
        machine.connectionReady(connection.id, now: now)
        shared.connectionsOpened.add(1, ordering: .relaxed)
    }

    func connection(_ connection: Connection, failedToConnect error: HTTP2Error) {
        connectAttemptFailed(connection.id, error, now: .now)
    }

    func connection(_ connection: Connection, closedWithUnsent requests: [PendingRequest]) {
        switch machine.connectionClosed(connection.id, unsent: requests.count) {
        case .none:
            break
        case .requeue:
            for request in requests.reversed() { requeue(request) }
        case .failUnsent:
            for request in requests.reversed() {
                request.complete(.failure(HTTP2Error(code: .shutdown, message: "client shut down")))
            }
        case let action:
            assertionFailure("not a connection-closed action: \(action)")
        }
    }

    func connection(_ connection: Connection, closedStreamAnsweredAfter latency: Duration?) {
        if latency != nil { shared.requestsCompleted.add(1, ordering: .relaxed) }
        paced(machine.streamClosed(connection.id, answeredAfter: latency,
                                   demandHeldBack: shared.demandHeldBack.load(ordering: .relaxed), now: .now))
    }

    func connection(_ connection: Connection, refused request: PendingRequest) {
        request.refusals += 1
        switch machine.refused(refusals: request.refusals) {
        case .requeue:
            requeue(request)
        case .failRefused:
            request.complete(.failure(HTTP2Error(code: .refused, message: "refused by the server \(request.refusals) times")))
        case let action:
            assertionFailure("not a refusal action: \(action)")
        }
    }

    func connectionReceivedGoAway(_ connection: Connection) {
        machine.goAwayReceived(connection.id)
        shared.goAwaysReceived.add(1, ordering: .relaxed)
    }

    func connectionReceivedPingAck(_ connection: Connection) {
        shared.pingsAcknowledged.add(1, ordering: .relaxed)
    }
}
