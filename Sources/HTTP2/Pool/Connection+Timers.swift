/// Per-connection timers: set-up timeout, idle PING and its ACK deadline.
extension Connection {
    func checkTimers(now: ContinuousClock.Instant) {
        if isConnecting {
            guard now >= connectDeadline else { return }
            // A slow handshake is a network problem, not refused credentials (.tlsFailed).
            close(failingSentWith: HTTP2Error(code: .connectFailed, message: "connection set-up timed out after \(configuration.connectTimeout) (\(phase))"))
            return
        }
        guard phase == .ready, let session else { return }
        if let pingSentAt {
            if now - pingSentAt >= configuration.requestTimeout {
                logger.warning("no PING ACK; closing the connection")
                close(failingSentWith: HTTP2Error(code: .connectionLost, message: "no PING ACK within \(configuration.requestTimeout)"))
            }
        } else if now - lastActivity >= configuration.idlePingInterval {
            logger.trace("idle: sending PING")
            session.submitPing()
            pingSentAt = now
        }
    }

    /// The earliest instant at which `checkTimers` has something to do.
    func nextTimer() -> ContinuousClock.Instant? {
        if isConnecting { return connectDeadline }
        guard phase == .ready else { return nil }
        if let pingSentAt { return pingSentAt + configuration.requestTimeout }
        return lastActivity + configuration.idlePingInterval
    }
}
