import NIOConcurrencyHelpers

/// Counts the jobs being processed, so that a stopping worker can wait for the last one to settle.
final class JobsInFlight: Sendable {
    private struct State {
        var count = 0
        var closed = false
        var drainWaiter: CheckedContinuation<Void, Never>?
    }
    private let state = NIOLockedValueBox(State())

    /// False once closed: that delivery is not started, stays unacked, and the broker hands it
    /// to another worker when this one's connection closes.
    func start() -> Bool {
        state.withLockedValue { state in
            guard !state.closed else { return false }
            state.count += 1
            return true
        }
    }

    /// Returns how many jobs are still in flight.
    @discardableResult
    func finish() -> Int {
        let (remaining, waiter): (Int, CheckedContinuation<Void, Never>?) = state.withLockedValue { state in
            state.count -= 1
            guard state.closed, state.count == 0, let waiter = state.drainWaiter else { return (state.count, nil) }
            state.drainWaiter = nil
            return (0, waiter)
        }
        waiter?.resume()
        return remaining
    }

    /// No job starts after this.
    func close() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLockedValue { state in
            state.closed = true
            guard state.count == 0, let waiter = state.drainWaiter else { return nil }
            state.drainWaiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns once closed and every started job has finished.
    func drained() async {
        await withCheckedContinuation { continuation in
            let done = state.withLockedValue { state in
                guard !state.closed || state.count > 0 else { return true }
                state.drainWaiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
