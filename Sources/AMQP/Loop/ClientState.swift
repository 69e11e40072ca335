import NIOConcurrencyHelpers
import OwnerThread
/// State shared between callers and the AMQP owner thread, always accessed under the client's Mutex.
struct ClientState {
    enum Phase {
        case idle       // start() not called yet; commands wait
        case running    // owner thread alive
        case stopping   // shutdown() called; owner thread is closing
        case stopped    // owner thread gone (or never started)
    }

    var phase: Phase = .idle
    /// Commands for the owner thread, and whether it must be woken for the next one.
    var inbox = OwnerInbox<ClientCommand>()
    /// Generation of the live connection, nil while disconnected.
    var connectedGeneration: UInt64?
    var lastError: AMQPError?
    /// Set when connecting can never succeed (bad URL); waiters fail with it at once.
    var permanentError: AMQPError?
    var connectWaiters: [UInt64: CheckedContinuation<Result<Void, AMQPError>, Never>] = [:]
    var nextWaiterID: UInt64 = 0
    var stopWaiters: [CheckedContinuation<Void, Never>] = []
}
