#if canImport(Glibc)
import Glibc
#endif

/// SIGPIPE, ignored for the whole process. A write to a socket whose peer closed it (hiredis,
/// rabbitmq-c and OpenSSL all write with write(2)/send(2)) must fail with EPIPE, not kill the
/// worker. Blocking it on one thread is not enough: hiredis writes from a Dispatch queue's threads.
public enum BrokenPipes {
    /// Idempotent; the executable calls it before any thread starts, and `PushWorker` again for
    /// programs that embed the worker.
    public static func ignoreProcessWide() {
        signal(SIGPIPE, SIG_IGN)
    }
}
