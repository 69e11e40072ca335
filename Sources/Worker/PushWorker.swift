import AMQP
import Logging
import OwnerThread
import PushCore
import PushTransport
import Redis
import ServiceLifecycle

/// The worker service: consumes `push.jobs`, processes deliveries concurrently as they arrive
/// (prefetch bounds how many), and on graceful shutdown stops consuming, lets in-flight jobs settle within the
/// shutdown timeout, then closes its connections. Whatever it could not settle stays unacked and
/// the broker hands it to another worker.
public final class PushWorker: Service, Sendable {
    public let configuration: WorkerConfiguration
    public let status: WorkerStatus
    /// Counters, gauges and histograms for `/metrics` (`sampleMetrics` refreshes the gauges).
    public let metrics: WorkerMetrics
    private let logger: Logger
    private let amqp: AMQPClient
    private let redis: RedisClient
    /// The apps served and their platform transports; `reload` replaces them.
    let roster: AppRoster
    /// Credentials the apps share across the fleet (APNs provider tokens in Redis).
    let credentialStore: any CredentialStore
    private let gate: ConsumptionGate
    private let results: ResultPublisher
    private let processor: JobProcessor
    /// With quorum queues: holds the delay queue's retries until due.
    private let delayRelease: DelayQueueRelease?
    private let jobs = JobsInFlight()
    /// Job bodies in memory against --max-bytes-in-flight (asked by the AMQP thread per delivery).
    private let bodyBytes: BodyBytesInFlight
    /// The most job-body bytes held at once (each body counted twice, as against the cap).
    var bodyBytesPeak: Int { bodyBytes.peak }
    private let delayed = DelayedWork()
    private let jobTasks = JobTasks()
    /// Signalled by `stop()`: the shutdown timeout then runs in `run()`'s task group.
    private let stopRequested: AsyncStream<Void>
    private let stopRequestedInput: AsyncStream<Void>.Continuation
    /// What the AMQP client reports that the gate and the publisher act on: handled in `run`'s
    /// task group, since they are made after the client (no late-bound references).
    private let connectionEvents: AsyncStream<AMQPConnectionEvent>
    private let connectionEventsInput: AsyncStream<AMQPConnectionEvent>.Continuation

    /// - Parameters:
    ///   - credentialStore: keeps the credentials apps share in step across the fleet; the
    ///     executable gives APNs' provider-token store over Redis. By default each app keeps its own.
    ///   - metrics: where the metrics go; by default swift-metrics' global factory.
    public init(configuration: WorkerConfiguration, credentialStore: any CredentialStore = UnsharedCredentials(),
                logger: Logger, metrics: WorkerMetrics = WorkerMetrics()) throws(AppSetupError) {
        guard !configuration.parserPlatforms.isEmpty else {
            throw AppSetupError(app: "(none)", "no app is configured and no platform is named (WorkerConfiguration.jobPlatforms): a worker needs at least one app")
        }
        HeapReturn.tuneAllocator()
        BrokenPipes.ignoreProcessWide()
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.status = WorkerStatus(metrics: metrics)
        self.credentialStore = credentialStore
        let roster = AppRoster(apps: try Self.served(credentialStore.adopt(configuration.apps), metrics: metrics, logger: logger))
        self.roster = roster
        self.redis = RedisClient(configuration: configuration.redis, logger: logger)
        let status = self.status
        let (connectionEvents, connectionEventsInput) = AsyncStream.makeStream(of: AMQPConnectionEvent.self)
        self.connectionEvents = connectionEvents
        self.connectionEventsInput = connectionEventsInput
        (stopRequested, stopRequestedInput) = AsyncStream.makeStream(of: Void.self)
        self.amqp = AMQPClient(configuration: configuration.amqp, topology: configuration.topology, logger: logger) { event in
            switch event {
            case .connected:
                status.setAMQPConnected(true)
            case let .disconnected(reason):
                status.setAMQPConnected(false)
                logger.warning("RabbitMQ connection lost; reconnecting", metadata: [LogKeys.error: "\(reason)"])
            case .consumerCancelledByServer, .consumerStarted, .consumeFailed:
                break   // the gate logs and acts on these (handle(_:))
            case let .blocked(reason):
                logger.warning("RabbitMQ blocked publishing (\(reason)): settling waits")
            case .unblocked:
                logger.notice("RabbitMQ unblocked publishing")
            }
            connectionEventsInput.yield(event)
        }
        self.bodyBytes = BodyBytesInFlight(cap: configuration.maxBytesInFlight)
        self.gate = ConsumptionGate(amqp: amqp, status: status, configuration: configuration, delayed: delayed, logger: logger)
        self.results = ResultPublisher(amqp: amqp, gate: gate, status: status, delayed: delayed, topology: configuration.topology)
        self.processor = JobProcessor(configuration: configuration, amqp: amqp, redis: redis, roster: roster,
                                      status: status, gate: gate, results: results, tasks: jobTasks, logger: logger)
        self.delayRelease = configuration.queueType == .quorum
            ? DelayQueueRelease(amqp: amqp, configuration: configuration, delayed: delayed, logger: logger) : nil
    }

    public func run() async throws {
        amqp.start()
        await credentialStore.prime()
        let bodyBytes = bodyBytes
        var delayHandler: (@Sendable (AMQPDelivery) -> Void)?
        if let delayRelease { delayHandler = { delayRelease.hold($0) } }
        gate.open(delivering: deliveryHandler(), bodyRoom: { bodyBytes.room }, delayHandler: delayHandler)
        logger.info("worker started", metadata: [
            "amqp.queue": "\(configuration.jobQueue)", "amqp.prefetch": "\(configuration.prefetch)",
            "amqp.queue_type": "\(configuration.queueType)",
            "push.apps": "\(roster.current.names.joined(separator: ","))",
        ])
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                // Timed resumes and further tries at publishing results; ends after close().
                group.addTask { await self.delayed.run() }
                group.addTask {
                    for await event in self.connectionEvents { self.handle(event) }
                }
                group.addTask { await self.jobTasks.run() }
                group.addTask { await self.credentialStore.run() }
                group.addTask {
                    // The liveness probe's view of the task executor: a tick that stops means its
                    // threads are all blocked.
                    let tick = LoopHeartbeat(name: "the worker's tasks")
                    while !Task.isCancelled {
                        tick.running()
                        try? await Task.sleep(for: .seconds(1))
                    }
                    tick.stopped()
                }
                group.addTask {
                    // After stop(): jobs still unsettled when the shutdown timeout passes are left
                    // unacked (closing the connections) for another worker.
                    for await _ in self.stopRequested {
                        guard (try? await Task.sleep(for: self.configuration.shutdownTimeout)) != nil else { return }
                        await self.shutdownConnections()
                        return
                    }
                }
                await jobs.drained()
                delayRelease?.stop()
                delayed.close()
                jobTasks.close()
                connectionEventsInput.finish()
                stopRequestedInput.finish()
                // The shutdown timer is not needed any more: every job settled in time.
                group.cancelAll()
            }
        } onGracefulShutdown: { [self] in
            stop()
        }
        await shutdownConnections()
        let totals = status.snapshot
        let latency = status.latency.summary
        logger.info("worker stopped", metadata: [
            "push.jobs": "\(totals.jobs)", "push.sent": "\(totals.sent)", "push.failed": "\(totals.failed)",
            "push.invalid": "\(totals.invalid)", "push.retried": "\(totals.retried)", "push.rejected": "\(totals.rejected)",
            "latency.p50_us": "\(latency.p50Microseconds)", "latency.p99_us": "\(latency.p99Microseconds)",
        ])
    }

    private func handle(_ event: AMQPConnectionEvent) {
        switch event {
        case let .connected(generation):
            if generation > 1 { metrics.amqpReconnects.increment() }
            results.connectionRestored()
        case let .consumerCancelledByServer(queue): gate.consumerLost("RabbitMQ cancelled the consumer of \(queue)")
        case let .consumeFailed(queue, reason): gate.consumerLost("consuming \(queue) failed: \(reason)")
        case .consumerStarted: gate.consumerStarted()
        case .disconnected, .blocked, .unblocked: break
        }
    }

    /// Runs on the AMQP thread for each delivery: counts it in flight (jobs and body bytes, which
    /// pause consumption above --max-bytes-in-flight) and hands it to the processor. A delivery
    /// whose body was not read for lack of room (`BodyBytesInFlight`) goes back to the queue.
    private func deliveryHandler() -> @Sendable (AMQPDelivery) -> Void {
        let jobs = jobs, processor = processor, gate = gate, bodyBytes = bodyBytes, roster = roster, metrics = metrics
        let maxMessageBytes = configuration.maxMessageBytes
        let heapReturn = HeapReturn.glibcAllocates ? HeapReturn() : nil
        @Sendable func memory(_ action: BodyBytesInFlight.Action) {
            switch action {
            case .none: break
            case .pause: gate.pause(.memory)
            case .resume: gate.resume(.memory)
            }
        }
        return { delivery in
            if let size = delivery.discardedBodySize, size <= maxMessageBytes {
                memory(bodyBytes.refuse())
                processor.handBack(delivery)
                return
            }
            metrics.jobsConsumed.increment()
            guard jobs.start() else { return }
            let bytes = delivery.body.count
            memory(bodyBytes.take(bytes))
            let generation = roster.enter()
            processor.start(delivery) {
                roster.leave(generation)
                memory(bodyBytes.give(bytes))
                let stillInFlight = jobs.finish()
                heapReturn?.jobFinished(stillInFlight: stillInFlight)
            }
        }
    }

    /// Reads the gauges' values (devices in flight, prefetch, connections, pauses, each app's
    /// HTTP/2 pool) into the metrics: called before each scrape.
    public func sampleMetrics() {
        metrics.record(.init(devicesInFlight: processor.devicesInFlight.current, prefetch: Int(gate.prefetch),
                             amqpConnected: amqp.isConnected, redisHealthy: status.snapshot.redisProblem == nil,
                             pausedFor: gate.pauseCauses))
        for app in roster.current.apps.allValues {
            app.metrics.sample(app.transport.statistics, credentialRenewals: app.transport.credentialRenewals)
        }
    }

    /// Stops taking jobs; `run` returns once the jobs in flight have settled (or the shutdown
    /// timeout forced the connections closed, leaving the rest unacked for redelivery).
    public func stop() {
        logger.info("stopping: no new jobs; finishing the ones in flight")
        gate.close()
        jobs.close()
        // Held retries stay unacked for another worker: not released early.
        delayRelease?.stop()
        // Work waiting for a timer runs now (its last chance); new work is refused.
        delayed.close()
        stopRequestedInput.yield()
    }

    private func shutdownConnections() async {
        await amqp.shutdown()
        for transport in roster.current.transports { await transport.shutdown() }
    }

    /// Every app's client. A name is one app (the configuration file refuses it twice).
    private static func served(_ apps: [String: any AppDefinition], metrics: WorkerMetrics, logger: Logger) throws(AppSetupError) -> [String: ServedApp] {
        let (served, failure) = build(apps, metrics: metrics, logger: logger)
        if let failure { throw failure }
        return served
    }

    /// Every app's client, by name, up to the first that cannot be made: what was built by then
    /// comes back with the failure, for the caller to close.
    private static func build(_ apps: [String: any AppDefinition], metrics: WorkerMetrics,
                              logger: Logger) -> (served: [String: ServedApp], failure: AppSetupError?) {
        var served = [String: ServedApp]()
        for (name, app) in apps.sorted(by: { $0.key < $1.key }) {
            do {
                let transport = try app.makeTransport(logger: appLogger(logger, name))
                let rules = app.jobRules
                served[name] = ServedApp(transport: transport, rules: rules, pruneInvalidTokens: app.pruneInvalidTokens,
                                         metrics: metrics.appMetrics(app: name, platform: rules.platformName,
                                                                     reasonsAreLabels: transport.failureReasonsAreLabels))
            } catch {
                return (served, AppSetupError(app: name, error.message))
            }
        }
        return (served, nil)
    }

    private static func appLogger(_ logger: Logger, _ app: String) -> Logger {
        var appLogger = logger
        appLogger[metadataKey: "push.app"] = "\(app)"
        return appLogger
    }

    /// A reload (SIGHUP): from now on jobs find the apps of `apps`. Apps named in `unchanged` keep
    /// their clients (connections, provider token, breaker); the others get new ones, and a hold
    /// on them is lifted. Jobs already in flight finish with the clients they began with; those
    /// clients are shut down once the last such job settled, and the provider-token loops of keys
    /// no app uses any more stop then. Throws, changing nothing and leaving nothing running, when
    /// a client cannot be made or an app would change its platform.
    public func reload(apps: [String: any AppDefinition], unchanged: Set<String>) async throws(AppSetupError) {
        let names = Set(apps.keys)
        try Self.checkPlatformsKept(apps: apps, running: roster.current)
        let kept = unchanged.intersection(names)
        // Renewed apps that share a credential already in use (an APNs team and key) keep it, so
        // their new connections start with the one the others use.
        let credentials = await credentialStore.prepare(apps.filter { !kept.contains($0.key) })
        let (fresh, failure) = Self.build(credentials.apps, metrics: metrics, logger: logger)
        if let failure {
            // Nothing of it starts: the clients made so far close, the new providers never run.
            for app in fresh.values { await app.transport.shutdown() }
            throw failure
        }
        credentialStore.commit(credentials, allApps: apps)
        let old = roster.replace(with: fresh, keeping: kept)
        gate.appsChanged(to: names, renewed: Set(fresh.keys))
        logger.notice("configuration reloaded: new jobs use it", metadata: [
            "push.apps": "\(names.sorted().joined(separator: ","))",
            "push.apps_renewed": "\(fresh.keys.sorted().joined(separator: ","))",
        ])
        let roster = roster, logger = logger, credentialStore = credentialStore
        _ = jobTasks.submit {
            let retired = await roster.retire(old)
            for transport in retired { await transport.shutdown() }
            let loopsStopped = credentialStore.retireUnused()
            logger.notice("configuration reload complete: the jobs begun before it settled, the connections it replaced are closed",
                          metadata: ["push.clients_closed": "\(retired.count)", "push.token_loops_stopped": "\(loopsStopped)"])
        }
    }

    /// An app keeps its platform across reloads: jobs already queued for it were written for that
    /// platform (a group's chunk jobs, the delay queues' retries), and would reach a transport that
    /// cannot read them. Moving an app is a new name, or a restart once its queued jobs are gone.
    static func checkPlatformsKept(apps: [String: any AppDefinition], running: AppRoster.Apps) throws(AppSetupError) {
        for (name, platform) in apps.mapValues(\.jobRules.platformName).sorted(by: { $0.key < $1.key }) {
            guard let current = running.apps[name]?.rules.platformName, current != platform else { continue }
            throw AppSetupError(app: name, "a reload cannot change an app's platform (\(current) to \(platform)): jobs queued for it "
                                + "were written for \(current). Give the \(platform) app a new name, or restart the workers once "
                                + "no \(current) job for it is queued")
        }
    }
}
