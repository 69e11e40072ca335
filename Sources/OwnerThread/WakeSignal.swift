import Glibc
internal import CSystemShim

/// Wakes an owner thread out of poll() from any thread: callers queue work in the client's inbox,
/// then signal. An eventfd counts, so a wake-up written before the owner reaches poll() is never
/// lost, and one read clears any number of them.
public final class WakeSignal: Sendable {
    /// Polled for readability by the owner thread, next to its sockets.
    public let descriptor: Int32

    public init() throws(OwnerThreadError) {
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard descriptor >= 0 else { throw OwnerThreadError("eventfd failed", errorNumber: errno) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Clears every signal so far; the owner calls it when poll() reported the descriptor readable.
    public func drain() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, MemoryLayout<UInt64>.size)
    }

    /// The owner's wait when it has one socket: until `socket` is readable, the signal fires, or
    /// `timeoutMilliseconds` pass.
    public func wait(readable socket: Int32, timeoutMilliseconds: Int32) {
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
        ]
        if poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds) > 0, descriptors[0].revents != 0 { drain() }
    }
}
