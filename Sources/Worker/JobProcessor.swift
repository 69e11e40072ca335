import AMQP
import APNs
import Logging
import PushCore
import Redis

/// Takes one delivery from `push.jobs` to its settlement: validate, expand, send, then publish
/// every event and retry with confirms, and only then ack (DESIGN.md "Delivery rules"). A class:
/// every delivery's task captures it, and one reference is cheaper to copy than its fields.
///
/// Two paths, one settlement: a job that names its devices runs without a task (`start`); groups,
/// large jobs, rejections and credential refreshes take a task (`process`). Both end in `settle`
/// (JobProcessor+Settle.swift); fan-outs are in JobProcessor+FanOut.swift.
final class JobProcessor: Sendable {
    let configuration: WorkerConfiguration
    let amqp: AMQPClient
    let clients: [String: APNsClient]
    let expander: GroupExpander
    let redis: RedisClient
    let status: WorkerStatus
    let gate: ConsumptionGate
    let results: ResultPublisher
    let redeliveries: RedeliveryCounter
    /// Per app: answers that mean its configuration is wrong, not its devices.
    let breakers: [String: ConfigurationBreaker]
    let logger: Logger
    private let parser = JobParser()
    /// Read once: asking the log handler for its level per job showed up in profiles.
    let logsSettledJobs: Bool

    init(configuration: WorkerConfiguration, amqp: AMQPClient, redis: RedisClient, clients: [String: APNsClient],
         status: WorkerStatus, gate: ConsumptionGate, results: ResultPublisher, logger: Logger) {
        self.configuration = configuration
        self.amqp = amqp
        self.clients = clients
        self.expander = GroupExpander(redis: redis, configuration: configuration, logger: logger)
        self.redis = redis
        self.status = status
        self.gate = gate
        self.results = results
        self.redeliveries = RedeliveryCounter(redis: redis, jobQueue: configuration.jobQueue, logger: logger)
        self.breakers = clients.mapValues { _ in ConfigurationBreaker() }
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
            Task { await process(delivery, parsed: nil, started: started, now: now, settled: settled) }
            return
        }
        let parsed = parse(delivery, now: now)
        guard case .success(let job) = parsed, job.groups.isEmpty, job.tokens.count <= configuration.chunkSize,
              !job.tokens.isEmpty, !Self.isExpired(job, now: now) else {
            Task { await process(delivery, parsed: parsed, started: started, now: now, settled: settled) }
            return
        }
        let log = JobLog(logger, job: job)
        let client = clients[job.app]!
        let ids = APNsIDRange(count: job.tokens.count)
        DeliveryRound.send(job, to: job.tokens, ids: ids, with: client, deliveredAt: started, latency: status.latency) { [self] results in
            let finish: @Sendable ([APNsResult]) -> Void = { [self] results in
                var settlement = Settlement(job: job, now: now)
                settlement.counts.devices = job.tokens.count
                settlement.sent(with: ids)
                settlement.record(job.tokens, breakers[job.app]!.screen(results, jobTopic: job.topic != nil), retry: configuration.retry)
                settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
                settle(delivery, settlement, log: log) { _ in settled() }
            }
            guard results.contains(where: Self.asksForNewCredentials) else { return finish(results) }
            Task {
                var results = results
                await refreshCredentialsIfAsked(job, devices: job.tokens, ids: ids, results: &results, client: client, log: log)
                finish(results)
            }
        }
    }

    private func process(_ delivery: AMQPDelivery, parsed: Result<PushJob, JobRejection>?,
                         started: ContinuousClock.Instant, now: UnixTime, settled: @escaping @Sendable () -> Void) async {
        if let count = await redeliveries.count(delivery), count > configuration.maxRedeliveries {
            await reject(delivery, JobRejection(field: nil, "redelivered \(count) times without being settled (a worker crashed or lost its connection while holding it each time); not tried again"), now: now)
            settled()
            return
        }
        guard let (settlement, log) = await prepare(delivery, parsed: parsed ?? parse(delivery, now: now), started: started, now: now) else {
            settled()
            return
        }
        await settle(delivery, settlement, log: log)
        settled()
    }

    /// The job, or what is wrong with it (size, JSON, fields, app).
    private func parse(_ delivery: AMQPDelivery, now: UnixTime) -> Result<PushJob, JobRejection> {
        do throws(JobRejection) {
            let size = delivery.discardedBodySize ?? delivery.body.count
            guard size <= configuration.maxMessageBytes, delivery.discardedBodySize == nil else {
                throw JobRejection(field: nil, "the message is \(size) bytes; the limit is \(configuration.maxMessageBytes) (--max-message-bytes). Split the devices over several jobs or use groups")
            }
            let job = try parser.parse(delivery.body, messageID: delivery.properties.messageID, now: now.seconds,
                                       makeID: JobID.next)
            guard clients[job.app] != nil else {
                throw JobRejection(field: "app", "unknown app \"\(job.app)\" (this worker serves: \(clients.keys.sorted().joined(separator: ", ")))")
            }
            return .success(job)
        } catch {
            return .failure(error)
        }
    }

    private static func isExpired(_ job: PushJob, now: UnixTime) -> Bool {
        job.expiration != 0 && job.expiration < now.seconds
    }

    private static func asksForNewCredentials(_ result: APNsResult) -> Bool {
        if case .refreshCredentials = result.outcome { true } else { false }
    }

    /// Everything up to settling, in a task. Returns what is still to settle, or nil when the
    /// delivery was already settled here (rejected, fanned out, or deferred).
    private func prepare(_ delivery: AMQPDelivery, parsed: Result<PushJob, JobRejection>,
                         started: ContinuousClock.Instant, now: UnixTime) async -> (Settlement, JobLog)? {
        let job: PushJob
        switch parsed {
        case .success(let parsedJob): job = parsedJob
        case .failure(let rejection):
            await reject(delivery, rejection, now: now)
            return nil
        }
        let log = JobLog(logger, job: job)

        let devices: [DeviceToken]
        var settlement = Settlement(job: job, now: now)
        if !job.groups.isEmpty || job.tokens.count > configuration.chunkSize {
            guard let inline = await fanOut(job, delivery: delivery, settlement: &settlement, started: started, log: log) else { return nil }
            devices = inline
        } else {
            devices = job.tokens
        }
        settlement.counts.devices += devices.count

        if Self.isExpired(job, now: now) {
            // APNs would discard it anyway; say so rather than send something stale.
            for device in devices { settlement.fail(device, status: 0, reason: "Expired") }
        } else if !devices.isEmpty {
            let client = clients[job.app]!
            let ids = APNsIDRange(count: devices.count)
            settlement.sent(with: ids)
            var results = await DeliveryRound.send(job, to: devices, ids: ids, with: client, deliveredAt: started, latency: status.latency)
            await refreshCredentialsIfAsked(job, devices: devices, ids: ids, results: &results, client: client, log: log)
            settlement.record(devices, breakers[job.app]!.screen(results, jobTopic: job.topic != nil), retry: configuration.retry)
        }
        settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
        return (settlement, log)
    }

    /// ExpiredProviderToken: mint a new JWT (if APNs' 20-minute rule allows) and resend those devices once.
    private func refreshCredentialsIfAsked(_ job: PushJob, devices: [DeviceToken], ids: APNsIDRange, results: inout [APNsResult],
                                           client: APNsClient, log: JobLog) async {
        let stale = results.indices.filter { Self.asksForNewCredentials(results[$0]) }
        guard !stale.isEmpty, let provider = client.tokenProvider else { return }
        let refreshed = (try? provider.refreshAfterRejection()) ?? false
        guard refreshed else {
            for index in stale { results[index].outcome = .credentialsProblem(reason: results[index].reason ?? "ExpiredProviderToken") }
            return
        }
        log.logger.notice("APNs said the provider token expired; minted a new one and resending", metadata: [LogKeys.devices: "\(stale.count)"])
        let again = await DeliveryRound.send(job, to: stale.map { devices[$0] }, ids: ids, positions: stale, with: client,
                                             deliveredAt: .now, latency: status.latency)
        for (index, result) in zip(stale, again) {
            results[index] = result
            if Self.asksForNewCredentials(result) { results[index].outcome = .credentialsProblem(reason: result.reason ?? "ExpiredProviderToken") }
        }
    }

    static func jobProperties(id: String) -> AMQPProperties {
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.messageID = id
        properties.persistent = true
        return properties
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        Int(DurationText.milliseconds(ContinuousClock.now - start))
    }
}
