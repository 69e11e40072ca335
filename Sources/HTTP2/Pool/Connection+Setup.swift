/// Connection set-up: TCP connect (trying each resolved address), proxy CONNECT, TLS handshake.
extension Connection {
    /// The fresh DNS answer for this connection arrived.
    func resolved(_ result: Result<[SocketAddress], HTTP2Error>, now: ContinuousClock.Instant) {
        switch result {
        case .success(let addresses):
            let action = state.resolved()
            if action == .connect {
                guard let usable = screened(addresses) else { return }
                self.addresses = usable
            }
            apply(action, now: now)
        case .failure(let error):
            close(failingSentWith: error)
        }
    }

    /// The addresses this connection may use (`onlyGlobalAddresses`); nil after failing it when
    /// none is left.
    private func screened(_ addresses: [SocketAddress]) -> [SocketAddress]? {
        guard configuration.onlyGlobalAddresses, configuration.proxy == nil else { return addresses }
        let screen = AddressScreen(addresses.map(\.ipAddress))
        if let refusal = screen.refusal(host: configuration.host) {
            close(failingSentWith: refusal)
            return nil
        }
        if !screen.refused.isEmpty {
            logger.debug("skipping addresses that are not public", metadata: [LogKeys.address: "\(screen.refused.joined(separator: ", "))"])
        }
        return screen.usableIndices.map { addresses[$0] }
    }

    func startConnect() throws(HTTP2Error) {
        var lastError: HTTP2Error?
        while addressIndex < addresses.count {
            do {
                socket = try TCPSocket(connectingTo: addresses[addressIndex])
                return
            } catch {
                lastError = error
                addressIndex += 1
            }
        }
        throw lastError ?? HTTP2Error(code: .connectFailed, message: "no address to connect to")
    }

    func finishConnect(now: ContinuousClock.Instant) {
        guard let socket else { return }
        let error = socket.connectError()
        guard error == 0 else {
            let message = "connect to \(addresses[addressIndex].description) failed: \(SystemError.describe(error))"
            addressIndex += 1
            if addressIndex < addresses.count {
                logger.debug("\(message); trying the next address")
                do {
                    try startConnect()
                } catch {
                    close(failingSentWith: error)
                }
            } else {
                close(failingSentWith: HTTP2Error(code: .connectFailed, message: message))
            }
            return
        }
        logger.debug("TCP connected", metadata: [LogKeys.address: "\(addresses[addressIndex].description)"])
        apply(state.socketConnected(), now: now)
    }

    /// Sends CONNECT to the configured proxy.
    func startProxyRequest() {
        guard let proxy = configuration.proxy else { return }
        output = ProxyHandshake.request(host: configuration.host, port: configuration.port, proxy: proxy)
        outputOffset = 0
        writeProxyRequest()
    }

    func writeProxyRequest() {
        guard let socket else { return }
        while outputOffset < output.count {
            switch socket.write(output, from: outputOffset) {
            case .bytes(let count): outputOffset += count
            case .wouldBlock: return
            case .closed: return close(failingSentWith: HTTP2Error(code: .connectFailed, message: "proxy closed the connection"))
            case .failed(let message): return close(failingSentWith: HTTP2Error(code: .connectFailed, message: "proxy: \(message)"))
            }
        }
        output.removeAll(keepingCapacity: true)
        outputOffset = 0
        state.proxyRequestWritten()
    }

    func readProxyReply(buffer: inout [UInt8], now: ContinuousClock.Instant) {
        guard let socket else { return }
        while true {
            switch socket.read(into: &buffer, maximum: ProxyHandshake.maximumReplyLength) {
            case .bytes(let count):
                proxyReply.append(contentsOf: buffer[..<count])
            case .wouldBlock:
                return
            case .closed:
                return close(failingSentWith: HTTP2Error(code: .connectFailed, message: "proxy closed the connection during CONNECT"))
            case .failed(let message):
                return close(failingSentWith: HTTP2Error(code: .connectFailed, message: "proxy: \(message)"))
            }
            switch ProxyHandshake.parse(proxyReply) {
            case .incomplete:
                if proxyReply.count > ProxyHandshake.maximumReplyLength {
                    return close(failingSentWith: HTTP2Error(code: .connectFailed, message: "proxy reply too long"))
                }
            case .rejected(let statusLine):
                return close(failingSentWith: HTTP2Error(code: .connectFailed, message: "proxy refused CONNECT: \(statusLine)"))
            case .established(let headerLength):
                // The server speaks only after our ClientHello, so nothing may follow the reply.
                guard headerLength == proxyReply.count else {
                    return close(failingSentWith: HTTP2Error(code: .connectFailed, message: "proxy sent data after its reply"))
                }
                logger.debug("proxy tunnel established")
                proxyReply = []
                return apply(state.proxyEstablished(), now: now)
            }
        }
    }

    func startTLS(now: ContinuousClock.Instant) {
        guard let socket else { return }
        do {
            tls = try TLSSocket(context: tlsContext, fd: socket.fd, serverName: configuration.effectiveServerName)
        } catch {
            return close(failingSentWith: error)
        }
        continueHandshake(now: now)
    }

    func continueHandshake(now: ContinuousClock.Instant) {
        guard let tls else { return }
        switch tls.handshake() {
        case .bytes:
            guard tls.negotiatedH2 else {
                return close(failingSentWith: HTTP2Error(
                    code: .http2NotOffered, message: "server did not select h2 via ALPN (selected: \(tls.negotiatedProtocolDescription))"))
            }
            do {
                let session = try NGHTTP2Session(delegate: self, keptResponseHeaders: configuration.keptResponseHeaders,
                                                  limits: configuration.responseLimits)
                try session.submitSettings(initialWindowSize: 1 << 20, connectionWindowSize: 1 << 24)
                self.session = session
            } catch {
                return close(failingSentWith: error)
            }
            apply(state.handshakeCompleted(now: now), now: now)
        case .wantRead:
            handshakeEvents = Poller.readable
        case .wantWrite:
            handshakeEvents = Poller.writable
        // A server that goes away mid-handshake (a restart, a load balancer) is the network, not the
        // credentials: .tlsFailed would pause the app as for a refused certificate.
        case .closed:
            close(failingSentWith: HTTP2Error(code: .connectFailed, message: "server closed the connection during the TLS handshake"))
        case .systemFailed(let message):
            close(failingSentWith: HTTP2Error(code: .connectFailed, message: message))
        case .failed(let message):
            close(failingSentWith: HTTP2Error(code: .tlsFailed, message: message))
        }
    }
}
