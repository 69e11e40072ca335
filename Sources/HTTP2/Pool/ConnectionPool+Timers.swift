/// Request deadlines, idle-connection close, and the poll timeout that serves them.
extension ConnectionPool {
    func runTimers(now: ContinuousClock.Instant) {
        while let request = deadlines.first {
            if request.isDone {
                _ = deadlines.popFirst()
                continue
            }
            guard request.deadline <= now else { break }
            _ = deadlines.popFirst()
            timeOut(request, now: now)
        }
        for connection in connections { connection.checkTimers(now: now) }
        closeIdleConnections(now: now)
    }

    private func timeOut(_ request: PendingRequest, now: ContinuousClock.Instant) {
        switch request.place {
        case .queued:
            _ = machine.requestTimedOut(queued: true, now: now)
            // Never written to a connection: the server cannot have it.
            request.complete(.failure(HTTP2Error(code: .unsent, message: "no connection could take the request within \(configuration.requestTimeout) (server unreachable?)")))
        case .inFlight(let connection, let streamID):
            connection.cancel(streamID: streamID)
            request.complete(.failure(HTTP2Error(code: .timeout, message: "no response within \(configuration.requestTimeout)")))
            paced(machine.requestTimedOut(queued: false, now: now))
        case .done:
            return
        }
    }

    /// Closes the connections the machine finds idle (it keeps `minConnections`).
    private func closeIdleConnections(now: ContinuousClock.Instant) {
        while case .closeIdle(let id) = machine.tick(now: now) {
            guard let connection = connection(id) else {
                return assertionFailure("the machine closes only connections the pool holds")
            }
            connection.logger.debug("closing idle connection")
            connection.closeGracefully(failingSentWith: HTTP2Error(code: .connectionLost, message: "idle close"), now: now)
        }
    }

    func pollTimeout(now: ContinuousClock.Instant) -> Int32 {
        var next = now + .seconds(10)
        if let request = deadlines.first { next = min(next, request.deadline) }
        for connection in connections {
            if let timer = connection.state.nextDeadline { next = min(next, timer) }
        }
        // The connect backoff, while requests wait; idle deadlines beyond `minConnections`.
        if let deadline = machine.nextDeadline() { next = min(next, deadline) }
        if machine.queued > 0 {
            // Requests wait for a connection's request rate: wake when the first lets one start.
            for connection in connections {
                if let start = connection.state.rateAllowsNextStream(now: now) { next = min(next, start) }
            }
        }
        guard next > now else { return 0 }
        let (seconds, attoseconds) = (next - now).components
        // Round up so the loop does not wake just before the deadline and spin.
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
