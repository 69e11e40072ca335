import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that accepts every connection, counts it and closes it: whether a
/// client connected at all, seen from the other side.
final class CountingListener: Sendable {
    let port: Int
    private let fd: Int32
    private let count = Atomic(0)

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard descriptor >= 0, ready else { throw TestFailure("cannot listen") }
        fd = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                count.add(1, ordering: .relaxed)
                close(connection)
            }
        }.start()
    }

    var accepted: Int { count.load(ordering: .relaxed) }

    /// Ends the accept loop.
    func stop() { shutdown(fd, Int32(SHUT_RDWR)) }

    deinit { close(fd) }
}
