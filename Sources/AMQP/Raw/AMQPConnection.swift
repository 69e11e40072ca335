internal import CRabbitMQ
#if canImport(Glibc)
import Glibc
#endif

/// Owns one rabbitmq-c connection (`amqp_connection_state_t`) and is the only type that touches
/// rabbitmq-c pointers. rabbitmq-c is not thread-safe, so an instance is confined to the AMQP
/// owner thread; it is freed deterministically in `deinit`.
///
/// Protocol obligations are handled here so callers cannot forget them: a server `channel.close`
/// is answered with `channel.close-ok`, a server `connection.close` with `connection.close-ok`.
final class AMQPConnection {
    static let frameMax: Int32 = 131_072

    /// Internal only so the `AMQPConnection+…` extensions can use it; nothing else touches it.
    let state: amqp_connection_state_t
    /// Scratch memory for outgoing strings and tables; recycled after each call that used it.
    private let scratch: UnsafeMutablePointer<amqp_pool_t>
    /// Set once the connection can no longer be used (socket error, heartbeat timeout, server close).
    var isBroken = false
    var openChannels: Set<UInt16> = []
    /// Negotiated heartbeat in seconds (0 = off).
    private(set) var heartbeat = 0
    /// Plain TCP: publishes, acks and nacks are buffered and written together (`+FrameBuffer`).
    let buffersFrames: Bool
    /// Frames not yet written; only `+FrameBuffer` touches it.
    var frameBuffer: [UInt8] = []
    /// Where rabbitmq-c encodes a method (first half) and message properties (second half).
    let frameScratch: UnsafeMutableRawPointer

    /// Connects, logs in and opens `channels` (those in `confirmChannels` in confirm mode).
    init(
        endpoint: AMQPEndpoint,
        configuration: AMQPConfiguration,
        channels: [UInt16],
        confirmChannels: Set<UInt16>
    ) throws(AMQPError) {
        guard let state = amqp_new_connection() else {
            throw AMQPError(code: .library, message: "amqp_new_connection failed (out of memory)")
        }
        self.state = state
        scratch = .allocate(capacity: 1)
        init_amqp_pool(scratch, 4096)
        buffersFrames = !endpoint.tls
        frameScratch = .allocate(byteCount: 2 * Int(Self.frameMax), alignment: 16)
        // Fully initialised from here: a throw below runs deinit, which frees the connection.
        try open(endpoint: endpoint, configuration: configuration)
        for channel in channels {
            try openChannel(channel)
            if confirmChannels.contains(channel) { try confirmSelect(channel) }
        }
    }

    /// Takes over `descriptor`, a connected stream socket whose peer speaks AMQP frames from the
    /// first byte on (no handshake): the frame reader's tests and its fuzz target
    /// (Fuzz/FuzzAMQPFrames) feed it bytes a broker could send. The connection owns and closes the
    /// descriptor; its limits are those of a logged-in connection (frame_max 128 KiB, no heartbeat).
    /// Nothing is written: the caller's stream starts after the handshake.
    init(adoptingConnectedSocket descriptor: Int32) throws(AMQPError) {
        guard let state = amqp_new_connection() else {
            throw AMQPError(code: .library, message: "amqp_new_connection failed (out of memory)")
        }
        self.state = state
        scratch = .allocate(capacity: 1)
        init_amqp_pool(scratch, 4096)
        buffersFrames = true
        frameScratch = .allocate(byteCount: 2 * Int(Self.frameMax), alignment: 16)
        guard let socket = amqp_tcp_socket_new(state) else {
            Glibc.close(descriptor)
            throw AMQPError(code: .library, message: "amqp_tcp_socket_new failed")
        }
        amqp_tcp_socket_set_sockfd(socket, descriptor)
        // rabbitmq-c tunes only a connection at rest, which it is once it has read a frame: the
        // protocol header a broker answers a client's with is that frame, fed in without the socket.
        var protocolHeader: [UInt8] = Array("AMQP".utf8) + [0, 0, 9, 1]
        var headerFrame = amqp_frame_t()
        _ = protocolHeader.withUnsafeMutableBytes { bytes in
            amqp_handle_input(state, amqp_bytes_t(len: bytes.count, bytes: bytes.baseAddress), &headerFrame)
        }
        let status = amqp_tune_connection(state, 0, Self.frameMax, 0)
        guard status == AMQP_STATUS_OK.rawValue else {
            throw AMQPError(code: .library, status: status, message: "amqp_tune_connection: \(Self.describe(status))")
        }
    }

    deinit {
        empty_amqp_pool(scratch)
        scratch.deallocate()
        frameScratch.deallocate()
        amqp_destroy_connection(state)
    }

    var socketDescriptor: Int32 { amqp_get_sockfd(state) }

    private func open(endpoint: AMQPEndpoint, configuration: AMQPConfiguration) throws(AMQPError) {
        let socket: OpaquePointer?
        if endpoint.tls {
            socket = amqp_ssl_socket_new(state)
            guard let socket else { throw AMQPError(code: .library, message: "amqp_ssl_socket_new failed") }
            // rabbitmq-c verifies peer and hostname by default but loads no CA bundle.
            let caFile = configuration.caFile ?? "/etc/ssl/certs/ca-certificates.crt"
            let status = amqp_ssl_socket_set_cacert(socket, caFile)
            guard status == AMQP_STATUS_OK.rawValue else {
                throw AMQPError(code: .connectFailed, status: status, message: "cannot load CA file \(caFile): \(Self.describe(status))")
            }
            amqp_ssl_socket_set_verify_peer(socket, 1)
            amqp_ssl_socket_set_verify_hostname(socket, 1)
            _ = amqp_ssl_socket_set_ssl_versions(socket, AMQP_TLSv1_2, AMQP_TLSvLATEST)
        } else {
            socket = amqp_tcp_socket_new(state)
            guard socket != nil else { throw AMQPError(code: .library, message: "amqp_tcp_socket_new failed") }
        }

        var timeout = Self.timeval(configuration.connectTimeout)
        let openStatus = amqp_socket_open_noblock(socket, endpoint.host, Int32(endpoint.port), &timeout)
        guard openStatus == AMQP_STATUS_OK.rawValue else {
            isBroken = true
            throw AMQPError(code: .connectFailed, status: openStatus,
                            message: "cannot connect to \(endpoint): \(Self.describe(openStatus))")
        }
        _ = amqp_set_handshake_timeout(state, &timeout)
        _ = amqp_set_rpc_timeout(state, &timeout)

        defer { recycle_amqp_pool(scratch) }
        var properties = try encode(table: [
            "connection_name": .string(configuration.connectionName),
            "product": "pushworker",
            // Merged by rabbitmq-c with its defaults. Without consumer_cancel_notify a server-side
            // cancel (queue deleted) would just make the consumer go silent.
            "capabilities": .table([
                "consumer_cancel_notify": true,
                "connection.blocked": true,
                "publisher_confirms": true,
                "basic.nack": true,
                "authentication_failure_close": true,
            ]),
        ])
        let reply = pushworker_amqp_login_plain(
            state, endpoint.vhost, 0, Self.frameMax, Int32(clamping: configuration.heartbeat),
            &properties, endpoint.user, endpoint.password)
        if reply.reply_type != AMQP_RESPONSE_NORMAL {
            isBroken = true
            throw loginError(reply, endpoint: endpoint)
        }
        heartbeat = Int(amqp_get_heartbeat(state))
    }

    private func loginError(_ reply: amqp_rpc_reply_t, endpoint: AMQPEndpoint) -> AMQPError {
        switch reply.reply_type {
        case AMQP_RESPONSE_SERVER_EXCEPTION where reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD:
            let close = reply.reply.decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
            let text = Self.string(close.reply_text)
            let code: AMQPError.Code = (close.reply_code == 403 || close.reply_code == 530) ? .authenticationFailed : .connectFailed
            return AMQPError(code: code, status: Int32(close.reply_code), message: "login to \(endpoint) refused: \(text)")
        case AMQP_RESPONSE_LIBRARY_EXCEPTION where reply.library_error == AMQP_STATUS_CONNECTION_CLOSED.rawValue:
            return AMQPError(code: .authenticationFailed, status: reply.library_error,
                             message: "broker closed the connection during login to \(endpoint) (wrong credentials or vhost?)")
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
            return AMQPError(code: .connectFailed, status: reply.library_error,
                             message: "login to \(endpoint) failed: \(Self.describe(reply.library_error))")
        default:
            return AMQPError(code: .connectFailed, message: "login to \(endpoint) failed")
        }
    }

    /// Best-effort orderly close (bounded by the RPC timeout); the socket is freed in deinit.
    func close() {
        guard !isBroken else { return }
        try? flushFrames()
        guard !isBroken else { return }
        for channel in openChannels.sorted(by: >) {
            _ = amqp_channel_close(state, channel, AMQP_REPLY_SUCCESS)
            if amqp_get_rpc_reply(state).reply_type != AMQP_RESPONSE_NORMAL { break }
        }
        openChannels.removeAll()
        _ = amqp_connection_close(state, AMQP_REPLY_SUCCESS)
        isBroken = true
    }

    /// Frees memory of frames already handled; pointers into earlier replies become invalid.
    func releaseBuffers() {
        amqp_maybe_release_buffers(state)
    }

    // MARK: - Helpers shared by the extensions

    /// Turns an RPC reply into an error, answering server closes as the protocol requires.
    func check(_ reply: amqp_rpc_reply_t, channel: UInt16, _ what: @autoclosure () -> String) throws(AMQPError) {
        switch reply.reply_type {
        case AMQP_RESPONSE_NORMAL:
            return
        case AMQP_RESPONSE_SERVER_EXCEPTION:
            throw serverClose(reply.reply, channel: channel, what())
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
            isBroken = true
            throw libraryError(reply.library_error, what())
        default:
            isBroken = true
            throw AMQPError(code: .library, message: "\(what()): no reply from rabbitmq-c")
        }
    }

    /// Handles a `channel.close` / `connection.close` method from the server.
    func serverClose(_ method: amqp_method_t, channel: UInt16, _ what: String) -> AMQPError {
        if method.id == AMQP_CHANNEL_CLOSE_METHOD, let decoded = method.decoded {
            let close = decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
            let text = Self.string(close.reply_text)
            // Frames still buffered for this channel go first: the broker discards them until
            // close-ok, whereas after it they would be an error on a closed channel.
            try? flushFrames()
            var ok = amqp_channel_close_ok_t()
            if amqp_send_method(state, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok) != AMQP_STATUS_OK.rawValue {
                isBroken = true
            }
            openChannels.remove(channel)
            return AMQPError(code: .channelClosed, status: Int32(close.reply_code), message: "\(what): channel \(channel) closed by broker: \(text)")
        }
        isBroken = true
        if method.id == AMQP_CONNECTION_CLOSE_METHOD, let decoded = method.decoded {
            let close = decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
            let text = Self.string(close.reply_text)
            var ok = amqp_connection_close_ok_t()
            _ = amqp_send_method(state, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok)
            return AMQPError(code: .connectionLost, status: Int32(close.reply_code), message: "\(what): connection closed by broker: \(text)")
        }
        return AMQPError(code: .library, message: "\(what): unexpected server method \(method.id)")
    }

    func libraryError(_ status: Int32, _ what: String) -> AMQPError {
        let code: AMQPError.Code = switch status {
        case AMQP_STATUS_TIMEOUT.rawValue: .timeout
        case AMQP_STATUS_CONNECTION_CLOSED.rawValue, AMQP_STATUS_SOCKET_ERROR.rawValue,
             AMQP_STATUS_SOCKET_CLOSED.rawValue, AMQP_STATUS_HEARTBEAT_TIMEOUT.rawValue,
             AMQP_STATUS_SSL_ERROR.rawValue, AMQP_STATUS_TCP_ERROR.rawValue:
            .connectionLost
        default: .library
        }
        return AMQPError(code: code, status: status, message: "\(what): \(Self.describe(status))")
    }

    /// For calls that only write (publish, ack): any failure leaves the stream in an unknown state.
    func checkWrite(_ status: Int32, _ what: @autoclosure () -> String) throws(AMQPError) {
        guard status != AMQP_STATUS_OK.rawValue else { return }
        isBroken = true
        throw libraryError(status, what())
    }

    static func describe(_ status: Int32) -> String {
        guard let text = amqp_error_string2(status) else { return "status \(status)" }
        return String(cString: text)
    }

    static func timeval(_ duration: Duration) -> timeval {
        let (seconds, attoseconds) = duration.components
        return Glibc.timeval(tv_sec: Int(max(0, seconds)), tv_usec: Int(max(0, attoseconds) / 1_000_000_000_000))
    }

    static func string(_ bytes: amqp_bytes_t) -> String {
        String(decoding: UnsafeRawBufferPointer(start: bytes.bytes, count: bytes.len), as: UTF8.self)
    }

    static func array(_ bytes: amqp_bytes_t) -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: bytes.bytes, count: bytes.len))
    }

    /// Encodes strings and tables into scratch memory that lives until the scratch pool is recycled.
    var scratchEncoder: FieldTableEncoder { FieldTableEncoder(pool: scratch) }

    /// Copies `source` into scratch memory that lives until the scratch pool is recycled.
    func scratchBytes(_ source: some Collection<UInt8>) throws(AMQPError) -> amqp_bytes_t {
        try scratchEncoder.bytes(source)
    }

    func scratchBytes(_ string: String) throws(AMQPError) -> amqp_bytes_t {
        try scratchBytes(string.utf8)
    }

    func recycleScratch() {
        recycle_amqp_pool(scratch)
    }
}
