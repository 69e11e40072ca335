import Logging

/// What a connection reports to its pool. Implementations must not add or remove connections
/// while handling these (the pool iterates its list when they fire).
protocol ConnectionDelegate: AnyObject {
    func connectionBecameReady(_ connection: Connection, now: ContinuousClock.Instant)
    /// TCP, proxy or TLS set-up failed: nothing was sent on it.
    func connection(_ connection: Connection, failedToConnect error: HTTP2Error)
    /// Requests whose HEADERS never left: safe to dispatch elsewhere.
    func connection(_ connection: Connection, closedWithUnsent requests: [PendingRequest])
    /// REFUSED_STREAM or above a GOAWAY's last stream id: the server did not process it.
    func connection(_ connection: Connection, refused request: PendingRequest)
    /// A stream closed (before its request completes); `latency` after it was opened when a
    /// response arrived.
    func connection(_ connection: Connection, closedStreamAnsweredAfter latency: Duration?)
    func connectionReceivedGoAway(_ connection: Connection)
    func connectionReceivedPingAck(_ connection: Connection)
}

/// One HTTP/2-over-TLS connection driven by the pool's poll loop: set-up (TCP, optional proxy
/// CONNECT, TLS), then an nghttp2 session. Everything here is safe Swift over the thin wrappers.
final class Connection {
    let id: Int
    let configuration: HTTP2ClientConfiguration
    let logger: Logger
    /// The pool: it lives as long as the I/O thread, longer than any connection.
    unowned(unsafe) let delegate: any ConnectionDelegate
    let tlsContext: TLSContext

    /// Every decision (phase, draining, stream limit, timers); this class does the I/O it asks for.
    var state: ConnectionState
    var addresses: [SocketAddress] = []
    var addressIndex = 0
    var socket: TCPSocket?
    var tls: TLSSocket?
    var session: NGHTTP2Session?

    /// Bytes waiting for the socket; everything nghttp2 produced is coalesced here so one
    /// SSL_write carries many frames.
    var output: [UInt8] = []
    var outputOffset = 0
    /// Set when the last TLS call needs POLLIN/POLLOUT before it can continue.
    var tlsWaitsForWritable = false
    var handshakeEvents = Poller.readable
    var proxyReply: [UInt8] = []

    /// Starts in `.resolving`; the pool hands the addresses to `resolved(_:now:)`.
    init(id: Int, configuration: HTTP2ClientConfiguration, tlsContext: TLSContext, logger: Logger,
         delegate: any ConnectionDelegate, now: ContinuousClock.Instant) {
        self.id = id
        self.configuration = configuration
        self.tlsContext = tlsContext
        self.delegate = delegate
        var logger = logger
        logger[metadataKey: LogKeys.connectionID] = "\(id)"
        self.logger = logger
        state = ConnectionState(parameters: ConnectionState.Parameters(configuration: configuration), now: now)
    }

    /// The host and port to resolve and connect to: the proxy's when there is one.
    var target: (host: String, port: Int) {
        configuration.proxy.map { ($0.host, $0.port) } ?? (configuration.host, configuration.port)
    }

    var phase: ConnectionState.Phase { state.phase }
    var draining: Bool { state.draining }
    var isConnecting: Bool { state.isConnecting }
    var fd: Int32? { phase == .closed ? nil : socket?.fd }

    var inFlight: Int {
        assert(state.openStreams == (session?.streams.count ?? 0), "the state's stream count follows the session's")
        return state.openStreams
    }

    func canTakeRequest(now: ContinuousClock.Instant) -> Bool { state.canOpenStream(now: now) }

    /// See `ConnectionState.streamLimit`.
    var streamLimit: Int? { state.streamLimit }

    var pollEvents: Int16 {
        switch phase {
        case .connecting, .proxyWriting: return Poller.writable
        case .proxyReading: return Poller.readable
        case .tlsHandshake: return handshakeEvents
        case .ready:
            let pending = outputOffset < output.count || tlsWaitsForWritable
            return Poller.readable | (pending ? Poller.writable : 0)
        case .resolving, .closed: return 0
        }
    }

    /// Handles poll results for this connection's socket.
    func handle(events: Int16, now: ContinuousClock.Instant, buffer: inout [UInt8]) {
        switch phase {
        case .connecting: finishConnect(now: now)
        case .proxyWriting: writeProxyRequest()
        case .proxyReading: readProxyReply(buffer: &buffer, now: now)
        case .tlsHandshake:
            continueHandshake(now: now)
            // OpenSSL reads ahead: the server's first frames may have come with the handshake's
            // last bytes and wait in its buffer, where poll() cannot see them.
            if phase == .ready { readAvailable(now: now, buffer: &buffer) }
        case .ready:
            if events & (Poller.readable | Poller.failed) != 0 || tlsWaitsForWritable {
                readAvailable(now: now, buffer: &buffer)
            }
            if events & Poller.writable != 0 { flush() }
        case .resolving, .closed: break
        }
    }

    /// Opens a stream for `request`. False if the session cannot take more streams (ids exhausted).
    func submit(_ request: PendingRequest, now: ContinuousClock.Instant) -> Bool {
        guard phase == .ready, let session else { return false }
        let stream = HTTP2Stream(request: request, openedAt: now)
        do {
            let streamID = try session.submit(stream)
            request.place = .inFlight(self, streamID: streamID)
            state.streamOpened(now: now)
            return true
        } catch {
            logger.warning("cannot open a stream; draining the connection", metadata: [LogKeys.error: "\(error.message)"])
            state.streamOpenFailed()
            return false
        }
    }

    /// A timed-out request: tell the server to stop working on it.
    func cancel(streamID: Int32) {
        session?.cancel(streamID: streamID)
    }

    /// Reads until OpenSSL has nothing buffered (poll cannot see OpenSSL's buffer).
    private func readAvailable(now: ContinuousClock.Instant, buffer: inout [UInt8]) {
        tlsWaitsForWritable = false
        while phase == .ready, let tls, let session {
            switch tls.read(into: &buffer) {
            case .bytes(let count):
                state.bytesReceived(now: now)
                do {
                    try session.receive(buffer, count: count)
                } catch {
                    close(failingSentWith: HTTP2Error(code: .connectionLost, message: error.message))
                    return
                }
            case .wantRead:
                return
            case .wantWrite:
                tlsWaitsForWritable = true
                return
            case .closed:
                close(failingSentWith: HTTP2Error(code: .connectionLost, message: "server closed the connection"))
                return
            case .failed(let message), .systemFailed(let message):
                close(failingSentWith: HTTP2Error(code: .connectionLost, message: message))
                return
            }
        }
    }

    /// Writes pending frames; closes the connection once the session is finished (GOAWAY
    /// exchanged, no stream left).
    func flush() {
        guard writeOutput(), let session else { return }
        if !session.wantsRead && !session.wantsWrite {
            logger.debug("HTTP/2 session finished")
            close(failingSentWith: HTTP2Error(code: .connectionLost, message: "session finished"))
        }
    }

    /// Moves nghttp2's pending frames into `output` and writes as much as the socket takes.
    /// False when nothing more can be written now (or the connection failed).
    @discardableResult
    func writeOutput() -> Bool {
        guard phase == .ready, let tls, let session else { return false }
        if outputOffset == output.count {
            output.removeAll(keepingCapacity: true)
            outputOffset = 0
        }
        // Bound the buffer: nghttp2 keeps the rest until the socket drains.
        if output.count - outputOffset < 256 * 1024 {
            do {
                try session.drainOutput(into: &output)
            } catch {
                close(failingSentWith: HTTP2Error(code: .connectionLost, message: error.message))
                return false
            }
        }
        while outputOffset < output.count {
            switch tls.write(output, from: outputOffset) {
            case .bytes(let count):
                outputOffset += count
            case .wantWrite:
                tlsWaitsForWritable = true
                return false
            case .wantRead:
                return false
            case .closed:
                close(failingSentWith: HTTP2Error(code: .connectionLost, message: "server closed the connection"))
                return false
            case .failed(let message), .systemFailed(let message):
                close(failingSentWith: HTTP2Error(code: .connectionLost, message: message))
                return false
            }
        }
        tlsWaitsForWritable = false
        return true
    }

    /// GOAWAY(NO_ERROR) and close: for idle connections and shutdown.
    func closeGracefully(failingSentWith error: HTTP2Error, now: ContinuousClock.Instant) {
        apply(state.closeGracefully(), now: now)
        close(failingSentWith: error)
    }

    /// Releases the socket. Requests the server may have seen fail with `error`; requests whose
    /// HEADERS never left go back to the pool.
    func close(failingSentWith error: HTTP2Error) {
        let action = state.closed()
        guard action != .none else { return }
        let streams = session?.removeAllStreams() ?? []
        session = nil
        tls = nil
        socket = nil
        guard action == .releaseStreams else {
            delegate.connection(self, failedToConnect: error)
            return
        }
        var unsent: [PendingRequest] = []
        for stream in streams where !stream.request.isDone {
            if stream.headersSent {
                stream.request.complete(.failure(error))
            } else {
                unsent.append(stream.request)
            }
        }
        if !streams.isEmpty {
            logger.info("connection closed with streams in flight", metadata: [
                LogKeys.error: "\(error.message)",
                "http2.streams.failed": "\(streams.count - unsent.count)",
                "http2.streams.requeued": "\(unsent.count)",
            ])
        } else {
            logger.debug("connection closed", metadata: [LogKeys.error: "\(error.message)"])
        }
        delegate.connection(self, closedWithUnsent: unsent)
    }
}
