import Glibc
internal import COpenSSL

/// Result of a non-blocking TLS step.
enum TLSIOResult {
    case bytes(Int)
    case wantRead
    case wantWrite
    case closed
    /// TLS said no (an alert, a certificate that does not verify).
    case failed(String)
    /// The socket under it failed (a reset): the network, not the TLS configuration.
    case systemFailed(String)
}

/// One SSL object over a connected non-blocking socket. Confined to the I/O thread.
final class TLSSocket {
    private let ssl: OpaquePointer

    /// Sets SNI (names only: RFC 6066 forbids IP literals) and the identity the
    /// certificate must match: DNS name via SSL_set1_host, or an IP SAN for IP literals.
    init(context: TLSContext, fd: Int32, serverName: String) throws(HTTP2Error) {
        guard let ssl = SSL_new(context.raw) else {
            throw HTTP2Error(code: .tlsFailed, message: "SSL_new failed: \(OpenSSLError.drain())")
        }
        self.ssl = ssl
        try Self.attach(ssl, to: fd)
        if TCPSocket.isIPAddress(serverName) {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1 else {
                throw HTTP2Error(code: .tlsFailed, message: "invalid IP address \(serverName): \(OpenSSLError.drain())")
            }
        } else {
            guard pw_SSL_set_tlsext_host_name(ssl, serverName) == 1, SSL_set1_host(ssl, serverName) == 1 else {
                throw HTTP2Error(code: .tlsFailed, message: "setting server name \(serverName) failed: \(OpenSSLError.drain())")
            }
        }
        SSL_set_connect_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Reads go through a 64 KiB buffering BIO, writes straight to the socket. Without buffering,
    /// OpenSSL reads each record's 5-byte header and its body with two read() calls. OpenSSL's own
    /// read-ahead saves those calls but moves everything still buffered to the front of its buffer
    /// before each record (ssl3_read_n's memmove), costly with many small records queued (measured:
    /// docs/evidence/code-measurements.md#tls-read-buffer). The buffering BIO hands out bytes from
    /// an offset instead. `readAvailable` reads until WANT_READ, which comes only once this buffer
    /// is empty, so poll() sees every byte.
    private static func attach(_ ssl: OpaquePointer, to fd: Int32) throws(HTTP2Error) {
        guard let socket = BIO_new_socket(fd, BIO_NOCLOSE) else {
            throw HTTP2Error(code: .tlsFailed, message: "BIO_new_socket failed: \(OpenSSLError.drain())")
        }
        guard let buffered = BIO_new(BIO_f_buffer()) else {
            BIO_free(socket)
            throw HTTP2Error(code: .tlsFailed, message: "BIO_new(BIO_f_buffer) failed: \(OpenSSLError.drain())")
        }
        guard pw_BIO_set_read_buffer_size(buffered, Self.readBufferBytes) == 1 else {
            BIO_free(buffered)
            BIO_free(socket)
            throw HTTP2Error(code: .tlsFailed, message: "sizing the TLS read buffer failed: \(OpenSSLError.drain())")
        }
        // The chain owns one reference to the socket BIO, the write side another; SSL_free frees both.
        BIO_push(buffered, socket)
        BIO_up_ref(socket)
        SSL_set_bio(ssl, buffered, socket)
    }

    static let readBufferBytes = 64 * 1024

    func handshake() -> TLSIOResult {
        ERR_clear_error()
        let rc = SSL_do_handshake(ssl)
        if rc == 1 { return .bytes(0) }
        return classify(rc, during: "handshake")
    }

    /// True when the server selected "h2" via ALPN.
    var negotiatedH2: Bool {
        var protocolName: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolName, &length)
        guard let protocolName, length == 2 else { return false }
        return protocolName[0] == UInt8(ascii: "h") && protocolName[1] == UInt8(ascii: "2")
    }

    var negotiatedProtocolDescription: String {
        var protocolName: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolName, &length)
        guard let protocolName, length > 0 else { return "none" }
        return String(decoding: UnsafeBufferPointer(start: protocolName, count: Int(length)), as: UTF8.self)
    }

    func read(into buffer: inout [UInt8]) -> TLSIOResult {
        Self.clearErrorQueue()
        let rc = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(clamping: $0.count)) }
        if rc > 0 { return .bytes(Int(rc)) }
        return classify(rc, during: "read")
    }

    /// Partial writes are enabled: `.bytes(n)` may be less than offered; resend the rest later.
    func write(_ bytes: [UInt8], from offset: Int) -> TLSIOResult {
        Self.clearErrorQueue()
        let rc = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(clamping: $0.count - offset)) }
        if rc > 0 { return .bytes(Int(rc)) }
        return classify(rc, during: "write")
    }

    /// SSL_get_error reads the thread's error queue, so it must be empty before each call. It
    /// nearly always is (errors are drained where they happen): peeking is cheap, where
    /// ERR_clear_error frees every one of the queue's 16 slots on each call (measured:
    /// docs/evidence/code-measurements.md#tls-error-queue).
    private static func clearErrorQueue() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// Best effort close_notify; the socket is closed right after, so WANT_* is ignored.
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    private func classify(_ rc: Int32, during step: String) -> TLSIOResult {
        let systemErrno = errno
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            let detail = OpenSSLError.drain()
            if systemErrno == 0 || systemErrno == EAGAIN { return rc == 0 ? .closed : .failed("TLS \(step): \(detail)") }
            return .systemFailed("TLS \(step): \(SystemError.describe(systemErrno))")
        default:
            var message = "TLS \(step) failed: \(OpenSSLError.drain())"
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                message += " (certificate verification: \(String(cString: X509_verify_cert_error_string(verify))))"
            }
            return .failed(message)
        }
    }
}
