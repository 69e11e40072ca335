import AMQP
import APNs
import Foundation
import Logging
import PushCore
import Redis

/// Takes one delivery from `push.jobs` to its settlement: validate, expand, send, then publish
/// every event and retry with confirms, and only then ack (DESIGN.md "Delivery rules"). A class:
/// every delivery's task captures it, and one reference is cheaper to copy than its fields.
final class JobProcessor: Sendable {
    let configuration: WorkerConfiguration
    let amqp: AMQPClient
    let clients: [String: APNsClient]
    let expander: GroupExpander
    let redis: RedisClient
    let status: WorkerStatus
    let gate: ConsumptionGate
    let logger: Logger
    private let parser = JobParser()
    /// Read once: asking the log handler for its level per job showed up in profiles.
    private let logsSettledJobs: Bool

    init(configuration: WorkerConfiguration, amqp: AMQPClient, redis: RedisClient, clients: [String: APNsClient],
         status: WorkerStatus, gate: ConsumptionGate, logger: Logger) {
        self.configuration = configuration
        self.amqp = amqp
        self.clients = clients
        self.expander = GroupExpander(redis: redis, configuration: configuration, logger: logger)
        self.redis = redis
        self.status = status
        self.gate = gate
        self.logger = logger
        self.logsSettledJobs = logger.logLevel <= .debug
    }

    /// Bodies up to this size are parsed on the AMQP thread: a job of a few dozen devices takes
    /// microseconds; a 1,000-token chunk job is parsed in its task instead.
    static let inlineBodyLimit = 16 * 1024

    /// Takes a delivery on the AMQP thread. A job that names its devices (the common case) needs no
    /// task: it is parsed here, sent, and settled from the HTTP/2 thread when the last answer is
    /// in. Rejections, groups, large jobs, expired jobs and credential refreshes take a task.
    /// `settled` runs once the delivery was acked or handed back.
    func start(_ delivery: AMQPDelivery, settled: @escaping @Sendable () -> Void) {
        let started = ContinuousClock.now
        let now = UnixTime.now()
        guard delivery.body.count <= Self.inlineBodyLimit else {
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
        DeliveryRound.send(job, to: job.tokens, with: client, deliveredAt: started, latency: status.latency) { [self] results in
            let finish: @Sendable ([APNsResult]) -> Void = { [self] results in
                settle(delivery, settlement(job, job.tokens, results, now: now, started: started), log: log) { _ in settled() }
            }
            guard results.contains(where: Self.asksForNewCredentials) else { return finish(results) }
            Task {
                var results = results
                await refreshCredentialsIfAsked(job, devices: job.tokens, results: &results, client: client, log: log)
                finish(results)
            }
        }
    }

    private func process(_ delivery: AMQPDelivery, parsed: Result<PushJob, JobRejection>?,
                         started: ContinuousClock.Instant, now: UnixTime, settled: @escaping @Sendable () -> Void) async {
        guard let (settlement, log) = await prepare(delivery, parsed: parsed ?? parse(delivery, now: now), started: started, now: now) else {
            settled()
            return
        }
        settle(delivery, settlement, log: log) { _ in settled() }
    }

    /// The job, or what is wrong with it (size, JSON, fields, app).
    private func parse(_ delivery: AMQPDelivery, now: UnixTime) -> Result<PushJob, JobRejection> {
        do throws(JobRejection) {
            guard delivery.body.count <= configuration.maxMessageBytes else {
                throw JobRejection(field: nil, "the message is \(delivery.body.count) bytes; the limit is \(configuration.maxMessageBytes) (--max-message-bytes). Split the devices over several jobs or use groups")
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

    /// The tally of a job whose devices were all answered.
    private func settlement(_ job: PushJob, _ devices: [DeviceToken], _ results: [APNsResult],
                            now: UnixTime, started: ContinuousClock.Instant) -> Settlement {
        var settlement = Settlement(job: job, now: now)
        settlement.counts.devices = devices.count
        for (device, result) in zip(devices, results) {
            settlement.record(device, result, retry: configuration.retry)
        }
        settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
        return settlement
    }

    /// Everything up to settling, in a task. Returns what is still to settle, or nil when the
    /// delivery was already settled here (rejected, fanned out, or handed back).
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
            guard let expanded = await expand(job, delivery: delivery, settlement: &settlement, log: log) else { return nil }
            guard let inline = expanded.devices else {
                // Split into chunk jobs, each confirmed; they report their own completions.
                settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
                if await settle(delivery, settlement, log: log) { await expanded.markers.clear() }
                return nil
            }
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
            var results = await DeliveryRound.send(job, to: devices, with: client, deliveredAt: started, latency: status.latency)
            await refreshCredentialsIfAsked(job, devices: devices, results: &results, client: client, log: log)
            for (device, result) in zip(devices, results) {
                settlement.record(device, result, retry: configuration.retry)
            }
        }
        settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
        return (settlement, log)
    }

    /// Returns nil when the delivery was already handed back (Redis down); `devices` nil when they
    /// went out as chunk jobs, else the devices, few enough to send here.
    private func expand(_ job: PushJob, delivery: AMQPDelivery, settlement: inout Settlement, log: JobLog) async -> (devices: [DeviceToken]?, markers: ChunkMarkers)? {
        let logger = log.logger
        let tracker = PublishTracker(amqp: amqp)
        let markers = ChunkMarkers(redis: redis, jobQueue: configuration.jobQueue, delivery: delivery, logger: logger)
        var firstBatch: [DeviceToken]?
        var chunkCount = 0
        var deviceCount = 0
        var malformed = [GroupExpander.Malformed]()
        let chunkSize = configuration.chunkSize
        func publishChunk(_ devices: [DeviceToken]) async throws {
            let chunk = job.derived(tokens: devices, attempts: job.attempts, chunk: chunkCount)
            chunkCount += 1
            let digest = ChunkMarkers.digest(devices)
            // Redelivered: the chunks an earlier delivery had confirmed are already queued.
            if await markers.alreadyQueued(digest) { return }
            tracker.publish(.init(exchange: "", routingKey: configuration.jobQueue, body: chunk.encoded(), properties: Self.jobProperties(id: job.id)),
                            confirmed: { markers.confirmed(digest) })
            // One chunk at a time, noted in Redis once confirmed: a crash now leaves at most this
            // one chunk queued but unnoted, so a redelivered fan-out repeats at most one chunk
            // (with the chunk jobs in flight: --prefetch x --chunk-size devices per crash).
            await tracker.wait(untilOutstandingAtMost: 0)
            await markers.flush()
        }
        do {
            try await expander.expand(job, batchSize: chunkSize, malformed: { malformed.append($0) }) { batch in
                deviceCount += batch.count
                if chunkCount == 0, firstBatch == nil {
                    firstBatch = batch   // may be all there is: then no chunk job is needed
                    return
                }
                if let first = firstBatch {
                    firstBatch = nil
                    try await publishChunk(first)
                }
                try await publishChunk(batch)
            }
            try await tracker.finish()
            await markers.flush()
        } catch let error as RedisError {
            logger.error("cannot expand groups: Redis unavailable; the job goes back to the queue", metadata: ["error": "\(error)"])
            status.noteRedisFailure(error.description)
            try? await tracker.finish()
            await markers.flush()
            // Give Redis a moment before the broker hands the job out again.
            try? await Task.sleep(for: .seconds(1))
            amqp.nack(delivery.tag, requeue: true)
            return nil
        } catch {
            logger.error("could not publish chunk jobs; the job will be redelivered", metadata: ["error": "\(error)"])
            await markers.flush()
            amqp.nack(delivery.tag, requeue: true)
            return nil
        }
        status.noteRedisHealthy()
        for item in malformed {
            settlement.events.append(.tokenInvalid(token: item.member, reason: "BadDeviceToken", status: 0, timestamp: nil))
            settlement.counts.invalid += 1
            logger.warning("group member is not a device token", metadata: ["push.group": "\(item.group)", "problem": "\(item.problem)"])
        }
        if chunkCount > 0 {
            settlement.counts.chunks = chunkCount
            settlement.counts.devices = deviceCount
            logger.info("fan-out split into chunk jobs", metadata: [
                "push.devices": "\(deviceCount)", "push.chunks": "\(chunkCount)", "push.chunks.already_queued": "\(markers.skipped)",
            ])
            return (nil, markers)
        }
        return (firstBatch ?? [], markers)
    }

    /// ExpiredProviderToken: mint a new JWT (if APNs' 20-minute rule allows) and resend those devices once.
    private func refreshCredentialsIfAsked(_ job: PushJob, devices: [DeviceToken], results: inout [APNsResult], client: APNsClient, log: JobLog) async {
        let stale = results.indices.filter { if case .refreshCredentials = results[$0].outcome { true } else { false } }
        guard !stale.isEmpty, let provider = client.tokenProvider else { return }
        let refreshed = (try? provider.refreshAfterRejection()) ?? false
        guard refreshed else {
            for index in stale { results[index].outcome = .credentialsProblem(reason: results[index].reason ?? "ExpiredProviderToken") }
            return
        }
        log.logger.notice("APNs said the provider token expired; minted a new one and resending", metadata: ["push.devices": "\(stale.count)"])
        let again = await DeliveryRound.send(job, to: stale.map { devices[$0] }, with: client, deliveredAt: .now, latency: status.latency)
        for (index, result) in zip(stale, again) {
            results[index] = result
            if case .refreshCredentials = result.outcome { results[index].outcome = .credentialsProblem(reason: result.reason ?? "ExpiredProviderToken") }
        }
    }

    /// Returns whether the job was acked (false: handed back for redelivery).
    @discardableResult
    private func settle(_ delivery: AMQPDelivery, _ settlement: Settlement, log: JobLog) async -> Bool {
        await withCheckedContinuation { continuation in
            settle(delivery, settlement, log: log) { continuation.resume(returning: $0) }
        }
    }

    /// Publishes the job's events (and retry or held jobs); once the broker confirmed them all,
    /// acks the delivery and calls `done(true)`, else hands it back and calls `done(false)`.
    private func settle(_ delivery: AMQPDelivery, _ settlement: Settlement, log: JobLog,
                        done: @escaping @Sendable (Bool) -> Void) {
        if let reason = settlement.credentialsReason {
            // Stop taking jobs at once: every further one would fail the same way.
            gate.credentialsFailed(app: settlement.job.app, reason: reason)
        }
        let tracker = PublishTracker(amqp: amqp)
        let job = settlement.job
        let time = UnixTime.now()
        for event in settlement.events {
            tracker.publish(.init(exchange: configuration.resultsExchange, routingKey: event.routingKey,
                                  body: event.body(jobID: job.id, app: job.app, time: time), properties: Self.eventProperties))
        }
        if !settlement.retryTokens.isEmpty, let queue = configuration.retry.delayQueue(afterAttempts: job.attempts + 1) {
            let retry = job.derived(tokens: settlement.retryTokens, attempts: job.attempts + 1, chunk: job.chunk)
            tracker.publish(.init(exchange: "", routingKey: queue.name, body: retry.encoded(), properties: Self.jobProperties(id: job.id)))
        }
        if !settlement.heldTokens.isEmpty {
            // Not the devices' fault: they wait in the job queue, untouched attempts, while the
            // worker stops consuming until the credentials work again.
            let held = job.derived(tokens: settlement.heldTokens, attempts: job.attempts, chunk: job.chunk)
            tracker.publish(.init(exchange: "", routingKey: configuration.jobQueue, body: held.encoded(), properties: Self.jobProperties(id: job.id)))
        }
        let completed = PushEvent.jobCompleted(settlement.counts)
        tracker.publish(.init(exchange: configuration.resultsExchange, routingKey: completed.routingKey,
                              body: completed.body(jobID: job.id, app: job.app, time: time), properties: Self.eventProperties))
        let counts = settlement.counts
        tracker.whenFinished { [self] result in
            if case let .failure(error) = result {
                // Unconfirmed events would be lost if we acked: hand the job back instead
                // (duplicates of what was sent are the price of never losing a device).
                log.logger.error("events or retries were not confirmed; the job goes back to the queue", metadata: ["error": "\(error)"])
                amqp.nack(delivery.tag, requeue: true)
                done(false)
                return
            }
            amqp.ack(delivery.tag)
            status.recordJob(counts)
            if logsSettledJobs {
                log.logger.debug("job settled", metadata: [
                    "push.sent": "\(counts.sent)", "push.failed": "\(counts.failed)",
                    "push.invalid": "\(counts.invalid)", "push.retried": "\(counts.retried)",
                ])
            }
            done(true)
        }
    }

    private func reject(_ delivery: AMQPDelivery, _ rejection: JobRejection, now: UnixTime) async {
        logger.warning("job rejected", metadata: ["reason": "\(rejection)", "amqp.message_id": "\(delivery.properties.messageID ?? "-")"])
        var properties = delivery.properties
        properties.persistent = true
        // The publisher's per-message TTL was for the job queue: kept, it would silently drop the
        // dead-lettered copy (and its reason) from push.jobs.dead.
        properties.expiration = nil
        properties.headers["x-pushworker-error"] = .string(rejection.description)
        if let field = rejection.field { properties.headers["x-pushworker-field"] = .string(field) }
        properties.headers["x-pushworker-rejected-at"] = .string(now.rfc3339)
        let tracker = PublishTracker(amqp: amqp)
        tracker.publish(.init(exchange: "", routingKey: configuration.deadQueue, body: delivery.body, properties: properties))
        let jobID = Self.bestEffortID(delivery)
        let event = PushEvent.jobRejected(error: rejection.description, field: rejection.field)
        tracker.publish(.init(exchange: configuration.resultsExchange, routingKey: event.routingKey,
                              body: event.body(jobID: jobID, app: nil, time: now), properties: Self.eventProperties))
        do {
            try await tracker.finish()
            amqp.ack(delivery.tag)
            status.recordRejection()
        } catch {
            logger.error("could not dead-letter a rejected job; it goes back to the queue", metadata: ["error": "\(error)"])
            amqp.nack(delivery.tag, requeue: true)
        }
    }

    /// A rejected message may still carry a usable id; events should echo it.
    private static func bestEffortID(_ delivery: AMQPDelivery) -> String? {
        if let object = try? JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any],
           let id = object["id"] as? String, id.utf8.count <= JobParser.maxIDLength {
            return id
        }
        return delivery.properties.messageID
    }

    static let eventProperties: AMQPProperties = {
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.persistent = true
        return properties
    }()

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
