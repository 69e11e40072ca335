/// Whether the worker takes jobs, as a value: every pause has a reason, and each change returns the
/// one action the owner performs. Reasons of one app (its credentials refused, its APNs host
/// unreachable) hold only that app: its jobs wait in the delay queues while the other apps' jobs
/// flow (`isHeld`). Consumption itself stops for a reason of the whole worker, or once every app
/// it serves is held (nothing could flow, and the jobs then wait in the queue untouched).
struct ConsumptionState: Sendable, Equatable {
    /// Why the worker stopped taking jobs. Several can hold at once; each is lifted on its own.
    enum PauseReason: Hashable, Sendable, CustomStringConvertible {
        /// The platform refused an app's credentials (or the configuration they imply).
        case credentials(app: String)
        /// Events or retry jobs of settled jobs are not confirmed by the broker.
        case resultsUnpublishable
        /// The platform could not be reached: jobs would only be held back again.
        case platformUnavailable(app: String)
        /// Redis answered in a way that means its configuration is wrong (NOAUTH, WRONGTYPE).
        case redisConfiguration
        /// The bodies of the jobs held in memory passed the cap.
        case memory

        /// The app this reason holds back alone, or nil for a reason of the whole worker.
        var app: String? {
            switch self {
            case let .credentials(app), let .platformUnavailable(app): app
            case .resultsUnpublishable, .redisConfiguration, .memory: nil
            }
        }

        /// The kind, without the app: a metric's label (bounded).
        var cause: PauseCause {
            switch self {
            case .credentials: .credentials
            case .resultsUnpublishable: .resultsUnpublishable
            case .platformUnavailable: .platformUnavailable
            case .redisConfiguration: .redisConfiguration
            case .memory: .memory
            }
        }

        var description: String {
            switch self {
            case let .credentials(app): "the platform refused the credentials of app \(app)"
            case .resultsUnpublishable: "results cannot be published"
            case let .platformUnavailable(app): "the platform is unreachable for app \(app)"
            case .redisConfiguration: "Redis configuration problem"
            case .memory: "job bodies in memory above the cap"
            }
        }
    }

    enum PauseCause: String, CaseIterable, Sendable {
        case credentials
        case resultsUnpublishable = "results_unpublishable"
        case platformUnavailable = "platform_unavailable"
        case redisConfiguration = "redis_configuration"
        case memory
    }

    enum Action: Equatable, Sendable {
        case none
        case startConsuming
        case stopConsuming
        /// Consuming with another prefetch: cancel the consumer and consume again (RabbitMQ applies
        /// a basic.qos to consumers started after it).
        case restartConsuming
    }

    private(set) var pauses: Set<PauseReason> = []
    private(set) var opened = false
    private(set) var stopped = false
    /// The prefetch to consume with (`PrefetchTuner` changes it as jobs arrive).
    private(set) var prefetch: UInt16
    /// Every app the worker serves; empty: unknown, and then an app's reason stops consumption.
    private(set) var apps: Set<String>

    init(prefetch: UInt16 = 20, apps: Set<String> = []) {
        self.prefetch = prefetch
        self.apps = apps
    }

    /// Apps held back by a reason of their own.
    var heldApps: Set<String> { Set(pauses.compactMap(\.app)) }

    func isHeld(app: String) -> Bool { pauses.contains { $0.app == app } }

    mutating func retune(prefetch: UInt16) -> Action {
        guard prefetch != self.prefetch else { return .none }
        self.prefetch = prefetch
        return isConsuming ? .restartConsuming : .none
    }

    var isConsuming: Bool { opened && !stopped && !pausesConsumption }

    /// A reason of the whole worker, or every app held.
    private var pausesConsumption: Bool {
        var held = Set<String>()
        for reason in pauses {
            guard let app = reason.app else { return true }
            held.insert(app)
        }
        return !held.isEmpty && (apps.isEmpty || apps.isSubset(of: held))
    }

    /// The first start (`PushWorker.run`).
    mutating func open() -> Action {
        guard !opened, !stopped else { return .none }
        opened = true
        return pauses.isEmpty ? .startConsuming : .none
    }

    mutating func pause(_ reason: PauseReason) -> Action {
        let wasConsuming = isConsuming
        pauses.insert(reason)
        return wasConsuming && !isConsuming ? .stopConsuming : .none
    }

    mutating func resume(_ reason: PauseReason) -> Action {
        let wasConsuming = isConsuming
        guard pauses.remove(reason) != nil else { return .none }
        return isConsuming && !wasConsuming ? .startConsuming : .none
    }

    /// A reload (SIGHUP): the apps served now are `apps`. Holds of apps taken out or `renewed`
    /// (their credentials or host changed, so the cause may be gone) are lifted.
    mutating func appsChanged(to apps: Set<String>, renewed: Set<String>) -> Action {
        let wasConsuming = isConsuming
        self.apps = apps
        pauses = pauses.filter { reason in reason.app.map { apps.contains($0) && !renewed.contains($0) } ?? true }
        switch (wasConsuming, isConsuming) {
        case (false, true): return .startConsuming
        case (true, false): return .stopConsuming
        default: return .none
        }
    }

    /// The broker cancelled our consumer: consume again only if nothing else holds us back.
    mutating func consumerLost() -> Action {
        isConsuming ? .startConsuming : .none
    }

    mutating func stop() -> Action {
        guard !stopped else { return .none }
        stopped = true
        return .stopConsuming
    }
}
