import Glibc

/// One resolved address, copied out of getaddrinfo's list.
struct SocketAddress: Sendable {
    var storage: sockaddr_storage
    var length: socklen_t

    var description: String {
        var copy = storage
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let rc = withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                            NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard rc == 0 else { return "?" }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            + ":" + String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Result of a non-blocking read or write.
enum SocketIOResult {
    case bytes(Int)
    case wouldBlock
    case closed
    case failed(String)
}

/// A non-blocking TCP socket. Owns the descriptor; TLS later runs on the same descriptor.
final class TCPSocket {
    let fd: Int32

    /// A fresh, uncached lookup for every new connection (APNs rotates addresses).
    static func resolve(host: String, port: Int) throws(HTTP2Error) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let list else {
            throw HTTP2Error(code: .connectFailed, message: "DNS lookup of \(host) failed: \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr,
               Int(current.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(current.pointee.ai_addrlen)))
                }
                addresses.append(SocketAddress(storage: storage, length: current.pointee.ai_addrlen))
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw HTTP2Error(code: .connectFailed, message: "DNS lookup of \(host) returned no address")
        }
        return addresses
    }

    /// Starts a non-blocking connect; completion is signalled by POLLOUT, then check `connectError()`.
    init(connectingTo address: SocketAddress) throws(HTTP2Error) {
        let fd = socket(Int32(address.storage.ss_family),
                        Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw HTTP2Error(code: .connectFailed, message: "socket failed: \(SystemError.describe(errno))")
        }
        var one: Int32 = 1
        // Many small requests: never hold frames back waiting for ACKs.
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = address.storage
        let rc = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
        }
        if rc != 0 && errno != EINPROGRESS {
            let message = SystemError.describe(errno)
            close(fd)
            throw HTTP2Error(code: .connectFailed, message: "connect to \(address.description) failed: \(message)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// 0 when the connect finished successfully, otherwise the errno it failed with.
    func connectError() -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return errno }
        return error
    }

    /// Plain-text I/O, used only for the proxy CONNECT exchange before TLS starts.
    func write(_ bytes: [UInt8], from offset: Int) -> SocketIOResult {
        let n = bytes.withUnsafeBytes { buffer in
            Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
        }
        if n >= 0 { return .bytes(n) }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed(SystemError.describe(errno))
    }

    func read(into buffer: inout [UInt8], maximum: Int) -> SocketIOResult {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min(maximum, $0.count), 0) }
        if n > 0 { return .bytes(n) }
        if n == 0 { return .closed }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed(SystemError.describe(errno))
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
