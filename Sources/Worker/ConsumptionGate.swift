import AMQP
import Logging
import NIOConcurrencyHelpers
import Synchronization

/// Starts and stops consumption of the job queue for the reasons in `ConsumptionState`: refused
/// credentials, results that cannot be published, APNs or Redis trouble. While paused, jobs stay
/// in the queue instead of being burnt through. Timed resumes run as `DelayedWork`.
final class ConsumptionGate: Sendable {
    private let amqp: any JobBroker
    private let status: WorkerStatus
    private let configuration: WorkerConfiguration
    private let logger: Logger
    /// Given by `open`: the gate is made before the processor that handles deliveries.
    private let handler = NIOLockedValueBox<(@Sendable (AMQPDelivery) -> Void)?>(nil)
    private let bodyRoom = NIOLockedValueBox<(@Sendable () -> Int)?>(nil)
    /// With quorum queues: the delay queue's handler (`DelayQueueRelease`).
    private let delayHandler = NIOLockedValueBox<(@Sendable (AMQPDelivery) -> Void)?>(nil)
    private let state: NIOLockedValueBox<ConsumptionState>
    /// How many apps are held back now: read per job without the lock (almost always 0).
    private let heldAppCount = Atomic<Int>(0)
    private let delayed: DelayedWork

    init(amqp: any JobBroker, status: WorkerStatus, configuration: WorkerConfiguration, delayed: DelayedWork, logger: Logger) {
        self.amqp = amqp
        self.status = status
        self.configuration = configuration
        self.logger = logger
        self.delayed = delayed
        self.state = NIOLockedValueBox(ConsumptionState(prefetch: configuration.prefetch, apps: configuration.appNames))
    }

    var prefetch: UInt16 { state.withLockedValue { $0.prefetch } }

    /// What holds the worker back now, by kind (for the metrics).
    var pauseCauses: Set<ConsumptionState.PauseCause> { state.withLockedValue { Set($0.pauses.map(\.cause)) } }

    /// Consumes with `prefetch` from now on (restarting the consumer if it runs).
    func retune(prefetch: UInt16) {
        change { $0.retune(prefetch: prefetch) }
    }

    var isConsuming: Bool { state.withLockedValue { $0.isConsuming } }

    /// Whether `app`'s jobs are held back (its credentials refused, or its platform unreachable):
    /// they then wait in the delay queues while the other apps' jobs flow.
    func isHeld(app: String) -> Bool {
        guard heldAppCount.load(ordering: .relaxed) > 0 else { return false }
        return state.withLockedValue { $0.isHeld(app: app) }
    }

    /// Starts consuming; every delivery goes to `handler` (on the AMQP thread). A body larger than
    /// `bodyRoom()` when it arrives is not read whole (see `BodyBytesInFlight`).
    /// `delayHandler` takes the delay queue's deliveries (quorum queues), consumed and paused
    /// with the lanes.
    func open(delivering handler: @escaping @Sendable (AMQPDelivery) -> Void, bodyRoom: (@Sendable () -> Int)? = nil,
              delayHandler: (@Sendable (AMQPDelivery) -> Void)? = nil) {
        self.handler.withLockedValue { $0 = handler }
        self.bodyRoom.withLockedValue { $0 = bodyRoom }
        self.delayHandler.withLockedValue { $0 = delayHandler }
        change { $0.open() }
    }

    /// Stops consuming for `reason`; with `resumeAfter`, tries again after that long.
    func pause(_ reason: ConsumptionState.PauseReason, resumeAfter delay: Duration? = nil) {
        let wasHeld = reason.app.map { isHeld(app: $0) } ?? false
        let isNew = state.withLockedValue { !$0.pauses.contains(reason) }
        let action = change { $0.pause(reason) }
        if isNew { status.metrics.pauseBegan(reason.cause) }
        if action == .stopConsuming {
            logger.warning("consumption paused: jobs stay in the queue", metadata: [LogKeys.pause: "\(reason)"])
        } else if let app = reason.app, !wasHeld, isHeld(app: app) {
            logger.warning("app \(app) held back: its jobs wait in the delay queues while the other apps' jobs go on",
                           metadata: [LogKeys.pause: "\(reason)", LogKeys.app: "\(app)"])
        }
        if let delay { delayed.schedule(after: delay) { [self] in resume(reason) } }
    }

    func resume(_ reason: ConsumptionState.PauseReason) {
        if case .credentials(let app) = reason { status.credentialsRecovered(app: app) }
        let action = change { $0.resume(reason) }
        if action == .startConsuming {
            logger.notice("consumption resumes", metadata: [LogKeys.pause: "\(reason)"])
        }
    }

    /// A reload changed the apps served: see `ConsumptionState.appsChanged`.
    func appsChanged(to apps: Set<String>, renewed: Set<String>) {
        for app in renewed { status.credentialsRecovered(app: app) }
        let action = change { $0.appsChanged(to: apps, renewed: renewed) }
        if action == .startConsuming {
            logger.notice("consumption resumes: the reloaded apps are not held back")
        }
    }

    func credentialsFailed(app: String, reason: String) {
        if status.credentialsFailed(app: app, reason: reason) {
            logger.error("the platform refused the credentials of app \(app) (\(reason)). Its jobs wait until they work (in the delay queues while other apps' jobs go on). Check the app's key, certificate or VAPID key and its settings; retrying in \(configuration.credentialsRetryInterval)", metadata: [LogKeys.app: "\(app)", LogKeys.reason: "\(reason)"])
        }
        pause(.credentials(app: app), resumeAfter: configuration.credentialsRetryInterval)
    }

    /// The broker cancelled our consumer (its queue was deleted, or a node failed), or a consume
    /// failed: declare the topology again and consume, unless paused or stopped. Until the broker
    /// confirms a consumer (`consumerStarted`) the worker is not ready (`/healthz`), and it keeps trying.
    func consumerLost(_ problem: String) {
        if status.setConsumerProblem(problem) {
            logger.error("not consuming jobs; declaring the queues again and retrying", metadata: [LogKeys.error: "\(problem)"])
        }
        delayed.schedule(after: .seconds(1)) { [self] in await redeclareAndConsume() }
    }

    /// The broker answered consume-ok: jobs flow again.
    func consumerStarted() {
        if status.setConsumerProblem(nil) {
            logger.notice("consuming jobs again", metadata: [LogKeys.queue: "\(configuration.jobQueue)"])
        }
    }

    private func redeclareAndConsume() async {
        do {
            try await amqp.declare(configuration.topology)
            change { $0.consumerLost() }
        } catch {
            logger.error("could not declare the topology again; retrying", metadata: [LogKeys.error: "\(error)"])
            delayed.schedule(after: .seconds(5)) { [self] in await redeclareAndConsume() }
        }
    }

    func close() {
        change { $0.stop() }
    }

    /// Changes the state and queues its action for the AMQP thread while still holding the lock,
    /// so the broker sees starts and stops in the order the state made them: applied after the
    /// lock, a retune racing a pause could queue stop, stop, consume and consume while paused.
    /// Each action is one command, and consuming is idempotent per queue (`AMQPClient.consume`),
    /// so a restart, or a start that finds the consumer running, never makes a second consumer.
    @discardableResult
    private func change(_ transition: (inout ConsumptionState) -> ConsumptionState.Action) -> ConsumptionState.Action {
        let (action, pauses) = state.withLockedValue { state in
            let action = transition(&state)
            send(action, prefetch: state.prefetch)
            heldAppCount.store(state.heldApps.count, ordering: .relaxed)
            return (action, state.pauses)
        }
        status.setPauses(pauses.map(\.description).sorted(), ofTheWorker: pauses.filter { $0.app == nil }.map(\.description).sorted())
        return action
    }

    private func send(_ action: ConsumptionState.Action, prefetch: UInt16) {
        switch action {
        case .none: break
        case .startConsuming, .restartConsuming:
            guard let handler = handler.withLockedValue({ $0 }) else { return }
            let bodyRoom = bodyRoom.withLockedValue { $0 }
            amqp.consume(queue: configuration.jobQueue, prefetch: prefetch, maxBodyBytes: configuration.maxMessageBytes,
                         bodyRoom: bodyRoom, handler: handler)
            // The bulk lane, with its own fixed prefetch (a retune leaves its consumer as it is).
            amqp.consume(queue: configuration.bulkQueue, prefetch: configuration.bulkPrefetch,
                         maxBodyBytes: configuration.maxMessageBytes, bodyRoom: bodyRoom, handler: handler)
            if let delayHandler = delayHandler.withLockedValue({ $0 }) {
                amqp.consume(queue: configuration.delayQueue, prefetch: configuration.delayPrefetch, handler: delayHandler)
            }
        case .stopConsuming:
            amqp.stopConsuming()
        }
    }
}
