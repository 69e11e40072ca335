import PushCore

/// The queues a worker's options name, in the order `pushworker queues` shows them: the job
/// queue, its bulk lane, the delay queues of both (one per `--retry-delays` entry), the quorum-mode
/// delay queue `<job queue>.delay` (present only where that mode declared it), and the dead queue.
public struct QueueRoster: Sendable, Equatable {
    public enum Role: String, Sendable {
        case jobs, bulk, retry, bulkRetry = "bulk-retry", delay, dead
    }

    public struct Entry: Sendable, Equatable {
        public let role: Role
        public let name: String
        /// Queues that exist only in some set-ups: missing is normal for them, not a warning.
        public let optional: Bool
    }

    public let entries: [Entry]

    public init(jobQueue: String, retryDelays: [Duration]) {
        let bulk = jobQueue + ".bulk"
        var entries = [Entry(role: .jobs, name: jobQueue, optional: false), Entry(role: .bulk, name: bulk, optional: false)]
        entries += RetryPolicy(delays: retryDelays, jobQueue: jobQueue).queueNames.map { Entry(role: .retry, name: $0.name, optional: false) }
        entries += RetryPolicy(delays: retryDelays, jobQueue: bulk).queueNames.map { Entry(role: .bulkRetry, name: $0.name, optional: false) }
        entries.append(Entry(role: .delay, name: jobQueue + ".delay", optional: true))
        entries.append(Entry(role: .dead, name: DeadQueue.name(jobQueue: jobQueue), optional: false))
        self.entries = entries
    }
}
