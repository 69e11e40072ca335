/// Performing what `ConnectionState` decided: the I/O and the reports to the pool.
extension Connection {
    func apply(_ action: ConnectionState.Action, now: ContinuousClock.Instant) {
        switch action {
        case .none:
            break
        case .connect:
            do {
                try startConnect()
            } catch {
                close(failingSentWith: error)
            }
        case .writeProxyRequest:
            startProxyRequest()
        case .startTLS:
            startTLS(now: now)
        case .reportReady:
            logger.debug("TLS established, HTTP/2 ready")
            delegate.connectionBecameReady(self, now: now)
            flush()
        case .sendPing:
            logger.trace("idle: sending PING")
            session?.submitPing()
        case .reportGoAway:
            delegate.connectionReceivedGoAway(self)
        case .sendGoAway:
            session?.terminate()
            writeOutput()
            tls?.shutdown()
        case .close(let reason):
            if reason == .pingUnanswered { logger.warning("no PING ACK; closing the connection") }
            close(failingSentWith: error(for: reason))
        }
    }

    /// Set-up deadline, idle PING, PING ACK deadline.
    func checkTimers(now: ContinuousClock.Instant) {
        apply(state.tick(now: now), now: now)
    }

    private func error(for reason: ConnectionState.CloseReason) -> HTTP2Error {
        switch reason {
        case .connectTimedOut(let phase):
            // A slow handshake is a network problem, not refused credentials (.tlsFailed).
            return HTTP2Error(code: .connectFailed, message: "connection set-up timed out after \(configuration.connectTimeout) (\(phase))")
        case .pingUnanswered:
            return HTTP2Error(code: .connectionLost, message: "no PING ACK within \(configuration.requestTimeout)")
        }
    }
}
