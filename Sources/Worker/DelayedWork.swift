import Synchronization

/// Work to run after a delay (timed resumes, another try at publishing results), run by the task
/// group of the worker's `run()` so that nothing outlives the service. Once closed, work still
/// waiting runs at once (its last chance, while the connections are still open) and new work is
/// refused, so nothing waits for a timer that will never fire.
final class DelayedWork: Sendable {
    typealias Work = @Sendable () async -> Void
    private let items: AsyncStream<(Duration, Work)>
    private let input: AsyncStream<(Duration, Work)>.Continuation
    private let closed = Atomic<Bool>(false)

    init() {
        (items, input) = AsyncStream.makeStream()
    }

    /// False when closed: the caller must give up instead.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping Work) -> Bool {
        guard !closed.load(ordering: .acquiring) else { return false }
        if case .terminated = input.yield((delay, work)) { return false }
        return true
    }

    /// Runs scheduled work until `close()` and until the work started has finished.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await (delay, work) in items {
                group.addTask {
                    // Cancelled by close(): run now rather than never.
                    try? await Task.sleep(for: delay)
                    await work()
                }
            }
            group.cancelAll()
        }
    }

    func close() {
        closed.store(true, ordering: .releasing)
        input.finish()
    }
}
