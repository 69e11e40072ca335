import PushCore
import NIOConcurrencyHelpers

/// What the worker has done and what is wrong with it right now, for logs, `status` and tests.
public final class WorkerStatus: Sendable {
    /// The counters are `Int` (64 bits): 292,000 years at a million a second before one overflows.
    public struct Snapshot: Sendable, Hashable {
        public var jobs = 0
        public var rejected = 0
        public var sent = 0
        public var failed = 0
        public var invalid = 0
        public var retried = 0
        public var chunksPublished = 0
        /// Jobs put back into a delay queue because Redis could not expand their groups.
        public var deferred = 0
        /// `deferred` per served app, among them a held app's jobs: which app's jobs waited. Apps
        /// this worker does not serve are left out (their names come from the jobs, anyone's).
        public var deferredByApp: [String: Int] = [:]
        /// Deliveries handed back to the queue unread: their bodies found no room under
        /// --max-bytes-in-flight.
        public var handedBack = 0
        /// App → the reason the platform refused its credentials; consumption is paused while non-empty.
        public var credentialProblems: [String: String] = [:]
        public var redisProblem: String?
        public var amqpConnected = false
        /// Why results (events, retry jobs) could not be published, while that lasts.
        public var resultsProblem: String?
        /// Tries at publishing results that failed (each is retried; nothing is sent again).
        public var resultPublishFailures = 0
        /// The consumer was cancelled by the broker and is not back yet.
        public var consumerProblem: String?
        /// Why consumption is paused (empty while jobs are taken).
        public var pauses: [String] = []
        /// The pauses of the whole worker among `pauses` (not one app's credentials or platform).
        public var workerPauses: [String] = []
    }

    private let state = NIOLockedValueBox(Snapshot())
    /// Job delivery → APNs answer, per device.
    public let latency: LatencyRecorder
    /// The same events as counters for `/metrics`.
    let metrics: WorkerMetrics

    init(metrics: WorkerMetrics = WorkerMetrics()) {
        self.metrics = metrics
        latency = LatencyRecorder(timer: metrics.deliveryToAnswer)
    }

    public var snapshot: Snapshot { state.withLockedValue { $0 } }

    func recordJob(_ counts: JobCounts) {
        metrics.jobsAcked.increment()
        if counts.chunks > 0 { metrics.chunkJobsPublished.increment(by: counts.chunks) }
        state.withLockedValue { state in
            state.jobs += 1
            state.sent += counts.sent
            state.failed += counts.failed
            state.invalid += counts.invalid
            state.retried += counts.retried
            state.chunksPublished += counts.chunks
        }
    }

    func recordRejection() {
        metrics.jobsRejected.increment()
        metrics.jobsAcked.increment()
        state.withLockedValue { $0.rejected += 1 }
    }

    /// - Parameter app: the served app whose job waits, or nil for one this worker does not serve.
    func recordDeferral(app: String?) {
        metrics.jobsDeferred.increment()
        metrics.jobsAcked.increment()
        state.withLockedValue { state in
            state.deferred += 1
            if let app { state.deferredByApp[app, default: 0] += 1 }
        }
    }

    func bodyHandedBack() {
        metrics.jobsHandedBack.increment()
        state.withLockedValue { $0.handedBack += 1 }
    }

    /// Returns whether this is news (the app was fine until now).
    func credentialsFailed(app: String, reason: String) -> Bool {
        state.withLockedValue { state in
            defer { state.credentialProblems[app] = reason }
            return state.credentialProblems[app] == nil
        }
    }

    func credentialsRecovered(app: String) { _ = state.withLockedValue { $0.credentialProblems.removeValue(forKey: app) } }
    func clearCredentialProblems() { state.withLockedValue { $0.credentialProblems.removeAll() } }
    /// Cut short: a Redis error can carry a reply of any length.
    func noteRedisFailure(_ text: String) { state.withLockedValue { $0.redisProblem = String(text.prefix(300)) } }
    func noteRedisHealthy() { state.withLockedValue { $0.redisProblem = nil } }
    func setAMQPConnected(_ connected: Bool) { state.withLockedValue { $0.amqpConnected = connected } }
    func setResultsProblem(_ text: String?) { state.withLockedValue { $0.resultsProblem = text } }
    func resultsFailed(_ text: String) {
        state.withLockedValue { state in
            state.resultsProblem = text
            state.resultPublishFailures += 1
        }
    }
    /// Returns whether the problem changed (set where there was none, or cleared).
    @discardableResult
    func setConsumerProblem(_ text: String?) -> Bool {
        state.withLockedValue { state in
            defer { state.consumerProblem = text }
            return (state.consumerProblem == nil) != (text == nil)
        }
    }
    func setPauses(_ pauses: [String], ofTheWorker worker: [String]) {
        state.withLockedValue { state in
            state.pauses = pauses
            state.workerPauses = worker
        }
    }
}
