/// How the pool reacts to connection events: resubmission, failure, statistics.
extension ConnectionPool: ConnectionDelegate {
    /// A request may be refused this often (REFUSED_STREAM / GOAWAY) and resubmitted.
    static let maximumResubmissions = 3

    func connectionBecameReady(_ connection: Connection) {
        backoff.reset()
        connectNotBefore = nil
        shared.connectionsOpened.add(1, ordering: .relaxed)
    }

    func connection(_ connection: Connection, failedToConnect error: HTTP2Error) {
        guard !shuttingDown else { return }
        connectAttemptFailed(error, now: .now)
    }

    func connection(_ connection: Connection, closedWithUnsent requests: [PendingRequest]) {
        for request in requests.reversed() {
            if shuttingDown {
                request.complete(.failure(HTTP2Error(code: .shutdown, message: "client shut down")))
            } else {
                enqueue(request, atFront: true)
            }
        }
    }

    func connection(_ connection: Connection, refused request: PendingRequest) {
        request.refusals += 1
        guard request.refusals <= Self.maximumResubmissions, !shuttingDown else {
            request.complete(.failure(HTTP2Error(code: .refused, message: "refused by the server \(request.refusals) times")))
            return
        }
        enqueue(request, atFront: true)
    }

    func connection(_ connection: Connection, completedRequestAfter latency: Duration) {
        shared.requestsCompleted.add(1, ordering: .relaxed)
        paced(pacing.answered(after: latency, inFlight: streamsInFlight + 1, capacity: connectionCapacity, now: .now))
    }

    func connectionReceivedGoAway(_ connection: Connection) {
        shared.goAwaysReceived.add(1, ordering: .relaxed)
    }

    func connectionReceivedPingAck(_ connection: Connection) {
        shared.pingsAcknowledged.add(1, ordering: .relaxed)
    }
}
