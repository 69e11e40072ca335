import AMQP
import Logging
import Synchronization

/// Stops consuming when APNs refuses an app's credentials (so a bad key cannot burn through the
/// queue: the jobs stay there), and tries again every `credentialsRetryInterval`.
final class ConsumptionGate: Sendable {
    private let amqp: AMQPClient
    private let status: WorkerStatus
    private let configuration: WorkerConfiguration
    private let logger: Logger
    private let handler: @Sendable (AMQPDelivery) -> Void
    private let state = Mutex<(paused: Bool, stopped: Bool, resume: Task<Void, Never>?)>((false, false, nil))

    init(amqp: AMQPClient, status: WorkerStatus, configuration: WorkerConfiguration, logger: Logger,
         handler: @escaping @Sendable (AMQPDelivery) -> Void) {
        self.amqp = amqp
        self.status = status
        self.configuration = configuration
        self.logger = logger
        self.handler = handler
    }

    func open() {
        amqp.consume(queue: configuration.jobQueue, prefetch: configuration.prefetch, handler: handler)
    }

    func credentialsFailed(app: String, reason: String) {
        let isNews = status.credentialsFailed(app: app, reason: reason)
        let shouldPause = state.withLock { state in
            guard !state.paused, !state.stopped else { return false }
            state.paused = true
            return true
        }
        if isNews {
            logger.error("APNs refused the credentials of app \(app) (\(reason)). Consumption is paused: jobs stay in the queue. Check the key/certificate, its environment and topic; retrying in \(configuration.credentialsRetryInterval)", metadata: ["push.app": "\(app)", "apns.reason": "\(reason)"])
        }
        guard shouldPause else { return }
        amqp.stopConsuming()
        let interval = configuration.credentialsRetryInterval
        let task = Task { [self] in
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled else { return }
            let resume = state.withLock { state in
                guard !state.stopped else { return false }
                state.paused = false
                state.resume = nil
                return true
            }
            guard resume else { return }
            logger.notice("trying the credentials again: consuming resumes")
            status.clearCredentialProblems()
            open()
        }
        state.withLock { $0.resume = task }
    }

    /// The broker cancelled our consumer (its queue was deleted, or a node failed): declare the
    /// topology again and consume, unless paused or stopped.
    func consumerCancelled() {
        let shouldReopen = state.withLock { !$0.paused && !$0.stopped }
        guard shouldReopen else { return }
        Task { [self] in
            try? await Task.sleep(for: .seconds(1))
            do {
                try await amqp.declare(configuration.topology)
            } catch {
                logger.error("could not declare the topology again", metadata: ["error": "\(error)"])
            }
            if state.withLock({ !$0.paused && !$0.stopped }) { open() }
        }
    }

    func close() {
        let task = state.withLock { state in
            state.stopped = true
            return state.resume
        }
        task?.cancel()
        amqp.stopConsuming()
    }
}
