#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking pipe the AMQP thread polls next to the broker socket, so a queued command
/// wakes it immediately instead of after the poll timeout.
final class WakeSignal: Sendable {
    /// -1 when pipe() failed (fd exhaustion); the loop then relies on its poll timeout.
    private let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    func signal() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) already means "wake up".
        _ = write(writeEnd, &byte, 1)
    }

    func drain() {
        guard readEnd >= 0 else { return }
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let size = MemoryLayout.size(ofValue: buffer)
        while read(readEnd, &buffer, size) > 0 {}
    }

    /// Waits until `socket` is readable, the signal fires, or `timeoutMilliseconds` pass.
    func wait(socket: Int32, timeoutMilliseconds: Int32) {
        var fds = [
            pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
        ]
        let result = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        if result > 0 && fds[0].revents != 0 { drain() }
    }
}
