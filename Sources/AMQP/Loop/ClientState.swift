import NIOConcurrencyHelpers
/// State shared between callers and the AMQP owner thread, always accessed under the client's Mutex.
struct ClientState {
    enum Phase {
        case idle       // start() not called yet; commands wait
        case running    // owner thread alive
        case stopping   // shutdown() called; owner thread is closing
        case stopped    // owner thread gone (or never started)
    }

    var phase: Phase = .idle
    var commands: [ClientCommand] = []
    /// The owner thread is about to block in poll(): the next command must wake it. While it
    /// runs it drains the queue anyway, so commands queued then cost no write to the wake pipe.
    var ownerWaiting = false
    /// Generation of the live connection, nil while disconnected.
    var connectedGeneration: UInt64?
    var lastError: AMQPError?
    /// Set when connecting can never succeed (bad URL); waiters fail with it at once.
    var permanentError: AMQPError?
    var connectWaiters: [UInt64: CheckedContinuation<Result<Void, AMQPError>, Never>] = [:]
    var nextWaiterID: UInt64 = 0
    var stopWaiters: [CheckedContinuation<Void, Never>] = []
}
