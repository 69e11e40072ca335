import Glibc

/// Starts the dedicated pthread that runs a client's I/O loop: the loop blocks in poll(),
/// which must never happen on Swift's cooperative pool.
enum IOThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ run: @escaping @Sendable () -> Void) throws(HTTP2Error) {
        let body = Unmanaged.passRetained(Body(run: run)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { argument in
            let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
            // OpenSSL writes with write(2): a peer reset would raise SIGPIPE and kill the process.
            // Blocking it on this thread turns that into EPIPE without touching process-wide handlers.
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            body.run()
            return nil
        }, body)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(body).release()
            throw HTTP2Error(code: .protocolError, message: "pthread_create failed: \(SystemError.describe(rc))")
        }
        pthread_detach(thread)
    }
}
