import OwnerThread

/// The few state transitions the owner thread publishes to callers.
extension AMQPClient {
    var isStopping: Bool {
        shared.withLockedValue { $0.phase == .stopping }
    }

    func takeCommands() -> [ClientCommand] {
        shared.withLockedValue { state in
            var commands: [ClientCommand] = []
            state.inbox.takeAll(into: &commands)
            return commands
        }
    }

    /// Waits this short are not cut short by queued commands (see `waitForWork`).
    static let wakeFreeWaitMilliseconds: Int32 = 2

    /// Blocks until the socket is readable, a command is queued (for waits longer than
    /// `wakeFreeWaitMilliseconds`), or the timeout passes; returns at once if commands are already
    /// waiting.
    func waitForWork(socket: Int32, timeoutMilliseconds: Int32) {
        // A wait of a few milliseconds (buffered frames, acks due) ends on its own: commands queued
        // meanwhile wait for it rather than wake the thread. At one-token-job rates the publishes
        // of settled jobs woke it thousands of times a second (an eventfd write and a context
        // switch each), between waits of at most `writeCoalescing`.
        let short = timeoutMilliseconds <= Self.wakeFreeWaitMilliseconds
        let idle = shared.withLockedValue { short ? $0.inbox.ownerWillPause() : $0.inbox.ownerWillWait() }
        // The thread only runs when the wake signal was made (`start()`).
        guard idle, let wakeSignal = try? wakeSignal.get() else { return }
        heartbeat.waiting()
        wakeSignal.wait(readable: socket, timeoutMilliseconds: timeoutMilliseconds)
        heartbeat.running()
        shared.withLockedValue { $0.inbox.ownerIsRunning() }
    }

    /// At most `limit` commands, so a flood of publishes cannot starve frame reading (heartbeats,
    /// confirms, deliveries); `more` says whether some are still queued.
    func takeCommands(limit: Int) -> (commands: [ClientCommand], more: Bool) {
        let (commands, more) = shared.withLockedValue { $0.inbox.take(limit: limit) }
        return (commands, more)
    }

    func markConnected(generation: UInt64) {
        let waiters = shared.withLockedValue { state in
            state.connectedGeneration = generation
            state.lastError = nil
            defer { state.connectWaiters = [:] }
            return Array(state.connectWaiters.values)
        }
        waiters.forEach { $0.resume(returning: .success(())) }
    }

    func markDisconnected(_ error: AMQPError) {
        shared.withLockedValue { state in
            state.connectedGeneration = nil
            state.lastError = error
        }
    }

    func markUnusable(_ error: AMQPError) {
        let waiters = shared.withLockedValue { state in
            state.permanentError = error
            state.lastError = error
            defer { state.connectWaiters = [:] }
            return Array(state.connectWaiters.values)
        }
        waiters.forEach { $0.resume(returning: .failure(error)) }
    }

    /// Called last by the owner thread: fails what is left and releases `shutdown()` callers.
    func markStopped() {
        // Before the waiters resume: a stopped client's loop is not running, whoever holds it.
        heartbeat.stopped()
        let (commands, connectWaiters, stopWaiters) = shared.withLockedValue { state in
            state.phase = .stopped
            state.connectedGeneration = nil
            defer {
                state.connectWaiters = [:]
                state.stopWaiters = []
            }
            return (state.inbox.removeAll(), Array(state.connectWaiters.values), state.stopWaiters)
        }
        let error = AMQPError(code: .shutdown, message: "client was shut down")
        commands.forEach { $0.fail(with: error) }
        connectWaiters.forEach { $0.resume(returning: .failure(error)) }
        stopWaiters.forEach { $0.resume() }
    }
}
