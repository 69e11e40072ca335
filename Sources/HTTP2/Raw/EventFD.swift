import Glibc
internal import CSystemShim

/// Wakes the I/O thread out of poll() from any thread. An eventfd counts, so a wake-up
/// written before the loop reaches poll() is never lost.
final class EventFD: Sendable {
    let fd: Int32

    init() throws(HTTP2Error) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else {
            throw HTTP2Error(code: .protocolError, message: "eventfd failed: \(SystemError.describe(errno))")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, MemoryLayout<UInt64>.size)
    }

    func drain() {
        var count: UInt64 = 0
        _ = read(fd, &count, MemoryLayout<UInt64>.size)
    }
}
