import Glibc
internal import CSystemShim

/// The dedicated thread that owns a C connection and runs its loop: AMQP's `ConnectionLoop`
/// (rabbitmq-c), HTTP/2's `ConnectionPool` (nghttp2, OpenSSL) and its DNS lookups. Not Swift's
/// cooperative pool: these loops block in poll() and in library calls.
public enum OwnerThread {
    private final class Body {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Starts a detached thread named `name` (at most 15 bytes are kept) that runs `body`.
    /// SIGPIPE is blocked on it: rabbitmq-c and OpenSSL write with send(2)/write(2), and a peer
    /// that reset the connection must give EPIPE, not end the process, whatever the process-wide
    /// handler is.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(OwnerThreadError) {
        let context = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            // Named from inside, so the body never runs under the creator's name. For ps, top and
            // debuggers; Linux keeps 15 bytes and refuses longer names.
            _ = pw_set_thread_name(pthread_self(), String(decoding: body.name.utf8.prefix(15), as: UTF8.self))
            body.run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw OwnerThreadError("pthread_create failed", errorNumber: status)
        }
        pthread_detach(thread)
    }
}

/// An owner thread or its wake-up could not be made (thread or descriptor limits).
public struct OwnerThreadError: Error, CustomStringConvertible {
    public let message: String

    init(_ what: String, errorNumber: Int32) {
        message = "\(what): \(String(cString: strerror(errorNumber)))"
    }

    public var description: String { message }
}
