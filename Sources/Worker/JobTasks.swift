/// The jobs that need a task (groups, large or redelivered jobs, rejections, credential
/// refreshes) run in the task group of the worker's `run()`, not as free `Task {}`: nothing
/// outlives the service, and `run()` returns only after they finished. Closed once every job in
/// flight has settled, so no job can be refused a task.
final class JobTasks: Sendable {
    typealias Work = @Sendable () async -> Void
    private let items: AsyncStream<Work>
    private let input: AsyncStream<Work>.Continuation

    init() {
        (items, input) = AsyncStream.makeStream()
    }

    /// False only after `close()`.
    func submit(_ work: @escaping Work) -> Bool {
        if case .terminated = input.yield(work) { return false }
        return true
    }

    func run() async {
        await withDiscardingTaskGroup { group in
            for await work in items {
                group.addTask { await work() }
            }
        }
    }

    func close() {
        input.finish()
    }
}
