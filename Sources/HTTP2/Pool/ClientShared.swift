import NIOConcurrencyHelpers
import OwnerThread
import Synchronization

/// The only state callers and the I/O thread share: a lock-protected inbox, the eventfd that
/// wakes the thread, the published statistics, and the shutdown hand-shake.
final class ClientShared: Sendable {
    struct State: Sendable {
        var inbox = OwnerInbox<Submission>()
        var answers: [Resolver.Answer] = []
        var shutdownRequested = false
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
        var statistics = HTTP2ClientStatistics()
        /// Set when the client could not start (no eventfd or thread): every request fails with it.
        var startupFailure: HTTP2Error?
    }

    let state = NIOLockedValueBox(State())
    let wakeup: WakeSignal?
    /// Counters are bumped the moment things happen (before completions run), so a caller
    /// that just got a response sees it counted; gauges are published once per loop iteration.
    let requestsCompleted = Atomic(0)
    let connectionsOpened = Atomic(0)
    let goAwaysReceived = Atomic(0)
    let pingsAcknowledged = Atomic(0)
    /// Read on every job (`HTTP2Client.streamCapacity`), so apart from the locked snapshot.
    let streamCapacity: Synchronization.Atomic<Int>
    /// Set by the caller (`HTTP2Client.noteDemandHeldBack`), read by the pacing on each answer.
    let demandHeldBack = Atomic(false)

    init(initialStreamCapacity: Int) {
        streamCapacity = Atomic(initialStreamCapacity)
        do {
            wakeup = try WakeSignal()
        } catch {
            wakeup = nil
            state.withLockedValue { $0.startupFailure = HTTP2Error(code: .protocolError, message: error.message) }
        }
    }

    /// Returns the error to complete with immediately, or nil when the I/O thread took the request.
    func submit(_ submission: Submission) -> HTTP2Error? {
        let (failure, wake): (HTTP2Error?, Bool) = state.withLockedValue { state in
            if let failure = state.startupFailure { return (failure, false) }
            if state.shutdownRequested { return (HTTP2Error(code: .shutdown, message: "client is shut down"), false) }
            return (nil, state.inbox.post(submission))
        }
        if wake { wakeup?.signal() }
        return failure
    }

    /// A resolver thread's answer; wakes the I/O thread.
    func post(_ answer: Resolver.Answer) {
        state.withLockedValue { $0.answers.append(answer) }
        wakeup?.signal()
    }

    /// I/O thread: swaps the inbox into `buffer` (keeping both arrays' capacity) and takes DNS answers.
    func takeSubmissions(into buffer: inout [Submission], answers: inout [Resolver.Answer]) -> Bool {
        state.withLockedValue { state in
            state.inbox.takeAll(into: &buffer)
            if !state.answers.isEmpty { swap(&state.answers, &answers) }
            return state.shutdownRequested
        }
    }

    /// I/O thread, before it blocks in poll(): false when work came meanwhile (poll without blocking).
    func ownerWillWait() -> Bool {
        state.withLockedValue { state in
            state.inbox.ownerWillWait(otherWorkWaiting: !state.answers.isEmpty || state.shutdownRequested)
        }
    }

    func publish(_ statistics: HTTP2ClientStatistics) {
        streamCapacity.store(statistics.streamCapacity, ordering: .relaxed)
        state.withLockedValue { $0.statistics = statistics }
    }

    var statistics: HTTP2ClientStatistics {
        var statistics = state.withLockedValue { state in
            var statistics = state.statistics
            statistics.queuedRequests += state.inbox.count
            return statistics
        }
        statistics.requestsCompleted = requestsCompleted.load(ordering: .relaxed)
        statistics.connectionsOpened = connectionsOpened.load(ordering: .relaxed)
        statistics.goAwaysReceived = goAwaysReceived.load(ordering: .relaxed)
        statistics.pingsAcknowledged = pingsAcknowledged.load(ordering: .relaxed)
        return statistics
    }

    /// Asks the I/O thread to stop; `waiter` resumes once it has exited.
    func requestShutdown(waiter: CheckedContinuation<Void, Never>?) {
        let resumeNow: Bool = state.withLockedValue { state in
            state.shutdownRequested = true
            if state.exited { return true }
            if let waiter { state.exitWaiters.append(waiter) }
            return false
        }
        if resumeNow {
            waiter?.resume()
        } else {
            wakeup?.signal()
        }
    }

    /// The last thing the I/O thread does.
    func threadExited() {
        let waiters = state.withLockedValue { state in
            state.exited = true
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func failStartup(_ error: HTTP2Error) {
        let waiters = state.withLockedValue { state in
            state.startupFailure = error
            state.exited = true
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
