import AMQP
import BroadcastChannels
import Logging
import PushCore
import PushTransport
import Redis

/// Takes one delivery from `push.jobs` to its settlement: validate, expand, send, then publish
/// every event and retry with confirms, and only then ack (README "Delivery guarantees"). A class:
/// every delivery's task captures it, and one reference is cheaper to copy than its fields.
///
/// Two paths, one settlement: a job that names its devices runs without a task (`start`); groups,
/// large jobs, rejections and credential refreshes take a task (`process`). Both end in `settle`
/// (JobProcessor+Settle.swift); fan-outs are in JobProcessor+FanOut.swift.
final class JobProcessor: Sendable {
    let configuration: WorkerConfiguration
    let amqp: any JobBroker
    /// The apps and their platform transports, replaced by a reload.
    let roster: AppRoster
    let expander: GroupExpander
    let redis: RedisClient
    let status: WorkerStatus
    let gate: ConsumptionGate
    let results: ResultPublisher
    let tasks: JobTasks
    /// Notifications in flight to the platforms, across every job: what the connections allow, capped by
    /// `--max-in-flight`.
    let devicesInFlight: DevicesInFlight
    let prefetchTuner: PrefetchTuner?
    let redeliveries: RedeliveryCounter
    /// Broadcast channels' records (storage policy, last broadcast), beside the groups in Redis.
    let channels: ChannelRegistry
    let logger: Logger
    /// Knows every platform a job may be written for (`WorkerConfiguration.jobPlatforms`); each job
    /// is read with its app's (`ServedApp.rules`).
    let parser: JobParser
    /// Read once: asking the log handler for its level per job showed up in profiles.
    let logsSettledJobs: Bool

    init(configuration: WorkerConfiguration, amqp: any JobBroker, redis: RedisClient, roster: AppRoster,
         status: WorkerStatus, gate: ConsumptionGate, results: ResultPublisher, tasks: JobTasks, logger: Logger) {
        self.configuration = configuration
        self.parser = JobParser(platforms: configuration.parserPlatforms)
        self.amqp = amqp
        self.roster = roster
        self.expander = GroupExpander(redis: redis, configuration: configuration, logger: logger)
        self.redis = redis
        self.status = status
        self.gate = gate
        self.results = results
        self.tasks = tasks
        self.devicesInFlight = DevicesInFlight(
            limit: configuration.maxInFlight, bulkSharePercent: configuration.bulkSharePercent,
            streamCapacity: { roster.current.apps.allValues.reduce(0) { $0 + $1.transport.streamCapacity } },
            demandHeldBack: { held in
                for app in roster.current.apps.allValues { app.transport.noteDemandHeldBack(held) }
            })
        self.prefetchTuner = configuration.tunesPrefetch
            ? PrefetchTuner(initial: Int(configuration.prefetch), maxInFlight: configuration.maxInFlight,
                            maxBytesInFlight: configuration.maxBytesInFlight)
            : nil
        self.redeliveries = RedeliveryCounter(redis: redis, jobQueue: configuration.jobQueue, logger: logger)
        self.channels = ChannelRegistry(redis: redis, prefix: configuration.channelKeyPrefix)
        self.logger = logger
        self.logsSettledJobs = logger.logLevel <= .debug
    }

    /// Bodies up to this size are parsed on the AMQP thread: a job of a few dozen devices takes
    /// microseconds; a 1,000-token chunk job is parsed in its task instead.
    static let inlineBodyLimit = 16 * 1024

    /// Takes a delivery on the AMQP thread. A job that names its devices (the common case) needs no
    /// task: it is parsed here, sent, and settled from the HTTP/2 thread when the last answer is
    /// in. Rejections, groups, large jobs, expired jobs and credential refreshes take a task.
    /// `settled` runs once the delivery was acked or left for redelivery.
    func start(_ delivery: AMQPDelivery, settled: @escaping @Sendable () -> Void) {
        let started = ContinuousClock.now
        let now = UnixTime.now()
        // Redeliveries are counted (in a task): one that keeps coming back must not loop.
        guard delivery.body.count <= Self.inlineBodyLimit, delivery.discardedBodySize == nil, !delivery.redelivered else {
            run(orElse: settled) { [self] in await process(delivery, plan: nil, started: started, now: now, settled: settled) }
            return
        }
        let plan = self.plan(delivery, now: now)
        observe(plan, bodyBytes: delivery.body.count)
        // Sent from here only when `JobStages` says the first step is sending (the job's own
        // devices); otherwise, or without its app, the task path asks the same value again.
        var stages = JobStages(inBulkLane: isInBulkLane(delivery), now: now)
        guard case .send(let job, _) = stages.first(plan, isHeld: gate.isHeld(app:)), let app = roster.app(for: job) else {
            run(orElse: settled) { [self] in await process(delivery, plan: plan, started: started, now: now, settled: settled) }
            return
        }
        let ids = RequestIDRange(count: job.tokens.count)
        // The one closure a round needs: the transport answers on its I/O thread.
        DeliveryRound.send(job, to: job.tokens, ids: ids, with: app.transport, budget: devicesInFlight, deliveredAt: started,
                           latency: status.latency, roundTrip: app.metrics.roundTrip) { [self] results in
            answered(delivery, job, results: results, ids: ids, app: app, started: started, now: now, settled: settled)
        }
    }

    /// The last answer of a task-free job is in. Credentials the platform called stale are renewed
    /// and their devices resent in a task (the renewal awaits); otherwise it is tallied and settled
    /// here. The job's log context is made when needed, not carried through every closure.
    private func answered(_ delivery: AMQPDelivery, _ job: PushJob, results: [PushResult], ids: RequestIDRange, app: ServedApp,
                          started: ContinuousClock.Instant, now: UnixTime, settled: @escaping @Sendable () -> Void) {
        guard results.contains(where: \.asksForNewCredentials) else {
            return finish(delivery, job, results: results, ids: ids, app: app, started: started, now: now, settled: settled)
        }
        run(orElse: settled) { [self] in
            var results = results
            await refreshCredentialsIfAsked(job, devices: job.tokens, ids: ids, results: &results, transport: app.transport,
                                            log: JobLog(logger, job: job))
            finish(delivery, job, results: results, ids: ids, app: app, started: started, now: now, settled: settled)
        }
    }

    /// Tallies and settles a task-free job.
    private func finish(_ delivery: AMQPDelivery, _ job: PushJob, results: [PushResult], ids: RequestIDRange, app: ServedApp,
                        started: ContinuousClock.Instant, now: UnixTime, settled: @escaping @Sendable () -> Void) {
        var settlement = Settlement(job: job, now: now)
        tally(&settlement, devices: job.tokens, results: results, ids: ids, app: app, started: started)
        // Stays: `settle` says whether it acked (the fan-out needs that), `settled` takes nothing.
        settle(delivery, settlement, log: JobLog(logger, job: job)) { _ in settled() }
    }

    private func process(_ delivery: AMQPDelivery, plan: JobPlan?, started: ContinuousClock.Instant, now: UnixTime,
                         settled: @escaping @Sendable () -> Void) async {
        if let count = await redeliveries.count(delivery), count > configuration.maxRedeliveries {
            await reject(delivery, JobRejection(field: nil, "redelivered \(count) times without being settled (a worker crashed or lost its connection while holding it each time); not tried again"), now: now)
            settled()
            return
        }
        let plan = plan ?? {
            let plan = self.plan(delivery, now: now)
            observe(plan, bodyBytes: delivery.discardedBodySize ?? delivery.body.count)
            return plan
        }()
        if let (settlement, log) = await carryOut(plan, delivery: delivery, started: started, now: now) {
            await settle(delivery, settlement, log: log)
        }
        settled()
    }

    /// In the worker's task group (`JobTasks`). Refused only after every job settled, which this
    /// one has not: `refused` (the delivery stays unacked) is there for completeness.
    func run(orElse refused: @Sendable () -> Void, _ work: @escaping @Sendable () async -> Void) {
        if !tasks.submit(work) { refused() }
    }
}
