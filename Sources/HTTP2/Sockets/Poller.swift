import Glibc

/// The poll(2) set of one loop iteration: rebuilt each time because connections come and go.
struct Poller {
    static let readable = Int16(POLLIN)
    static let writable = Int16(POLLOUT)
    static let failed = Int16(POLLERR | POLLHUP | POLLNVAL)

    private(set) var descriptors: [pollfd] = []

    mutating func reset() { descriptors.removeAll(keepingCapacity: true) }

    /// Returns the index to look the result up with.
    mutating func add(fd: Int32, events: Int16) -> Int {
        descriptors.append(pollfd(fd: fd, events: events, revents: 0))
        return descriptors.count - 1
    }

    func returnedEvents(at index: Int) -> Int16 { descriptors[index].revents }

    /// Waits at most `timeoutMilliseconds` (-1 = forever). EINTR counts as a wake-up.
    mutating func wait(timeoutMilliseconds: Int32) {
        let rc = poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        if rc < 0 {
            for index in descriptors.indices { descriptors[index].revents = 0 }
        }
    }
}
