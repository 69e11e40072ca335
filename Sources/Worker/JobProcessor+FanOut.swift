import AMQP
import PushCore
import Redis

/// Group expansion and the split of large fan-outs into chunk jobs.
extension JobProcessor {
    /// The rules of the job's app. The job entered the roster's generation it was read in, so its
    /// app is there until it settles, even across a reload; the default platform only as a last
    /// resort, whose misreadings are reported per member (never sent).
    func rules(of job: PushJob) -> any PlatformJobRules {
        roster.app(job.app)?.rules ?? parser.rules
    }

    /// The devices to send here (few enough for one round), or nil when the delivery is already
    /// taken care of: split into chunk jobs and settled, or deferred because Redis is unavailable.
    func fanOut(_ job: PushJob, delivery: AMQPDelivery, settlement: inout Settlement,
                started: ContinuousClock.Instant, log: JobLog) async -> [DeviceToken]? {
        let logger = log.logger
        let markers = ChunkMarkers(redis: redis, jobQueue: configuration.jobQueue, delivery: delivery, logger: logger)
        var firstBatch: [DeviceToken]?
        var chunkCount = 0
        var deviceCount = 0
        var malformed = [GroupExpander.Malformed]()
        let missing: [String]
        func publishChunk(_ devices: [DeviceToken]) async throws(AMQPError) {
            let chunk = job.derived(tokens: devices, attempts: job.attempts, chunk: chunkCount)
            let body = chunk.encoded()
            // Other platforms' devices are longer than an APNs token (a Web Push subscription up to
            // ~2 KB, an FCM token up to 4 KB): a chunk over the worker's own message limit would be
            // rejected by the worker and its devices lost, so it goes out as two halves instead. The
            // split depends only on the devices, so a redelivered fan-out marks the same chunks.
            if body.count > configuration.maxMessageBytes, devices.count > 1 {
                try await publishChunk(Array(devices[..<(devices.count / 2)]))
                try await publishChunk(Array(devices[(devices.count / 2)...]))
                return
            }
            chunkCount += 1
            let digest = ChunkMarkers.digest(devices)
            // Redelivered: the chunks an earlier delivery had confirmed are already queued.
            if await markers.alreadyQueued(digest) { return }
            // One chunk at a time, noted in Redis once confirmed: a crash now leaves at most this
            // one chunk queued but unnoted, so a redelivered fan-out repeats at most one chunk
            // (with the chunk jobs in flight: --prefetch x --chunk-size devices per crash).
            let message = ResultPublisher.Message(
                exchange: "", routingKey: configuration.bulkQueue, body: body,
                properties: Self.jobProperties(id: job.id), mandatory: true, confirmed: { markers.confirmed(digest) })
            guard await results.publish([message], logger: logger) else {
                throw AMQPError(code: .shutdown, message: "shut down while publishing chunk jobs")
            }
            await markers.flush()
        }
        do {
            missing = try await expander.expand(job, rules: rules(of: job), batchSize: configuration.chunkSize, malformed: { malformed.append($0) }) { batch in
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
            await markers.flush()
        } catch let error as RedisError {
            await markers.flush()
            await redisFailed(error, delivery: delivery, log: log)
            return nil
        } catch {
            // Only a shutdown stops chunk publishing: the delivery stays unacked and is redelivered.
            logger.warning("shutting down while splitting a fan-out; the job will be redelivered", metadata: [LogKeys.error: "\(error)"])
            await markers.flush()
            return nil
        }
        status.noteRedisHealthy()
        for item in malformed {
            settlement.events.append(.tokenInvalid(token: item.member, reason: "BadDeviceToken", status: 0, timestamp: nil))
            settlement.counts.invalid += 1
            logger.warning("group member is not a device token", metadata: [LogKeys.group: "\(item.group)", LogKeys.problem: "\(item.problem)"])
        }
        if !missing.isEmpty {
            settlement.counts.groupsMissing = missing
            for group in missing {
                settlement.events.append(.groupMissing(group: group, key: configuration.groupKey(app: job.app, group: group)))
            }
            logger.warning("groups without members (no such Redis key, or an empty set)", metadata: [
                LogKeys.group: "\(missing.prefix(10).joined(separator: ","))", "push.groups.missing": "\(missing.count)",
            ])
        }
        guard chunkCount > 0 else { return firstBatch ?? [] }
        settlement.counts.chunks = chunkCount
        settlement.counts.devices = deviceCount
        logger.info("fan-out split into chunk jobs", metadata: [
            LogKeys.devices: "\(deviceCount)", "push.chunks": "\(chunkCount)", "push.chunks.already_queued": "\(markers.skipped)",
        ])
        // The chunk jobs report their own completions; this settles the original.
        settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
        if await settle(delivery, settlement, log: log) { await markers.clear() }
        return nil
    }

    /// Redis is unreachable, or answers in a way that means its configuration is wrong.
    private func redisFailed(_ error: RedisError, delivery: AMQPDelivery, log: JobLog) async {
        status.noteRedisFailure(error.description)
        if Self.isRedisConfigurationError(error) {
            // Every job with groups would fail the same way: stop taking jobs. This one waits in a delay
            // queue, not requeued: a requeue comes back flagged redelivered, and after
            // --max-redeliveries of those a job that never crashed anything would be dead-lettered.
            log.logger.error("Redis configuration problem (\(error.message)); consumption is paused and the job waits in a delay queue. Check --redis-url (password, db) and --group-key-prefix; retrying in \(configuration.credentialsRetryInterval)")
            gate.pause(.redisConfiguration, resumeAfter: configuration.credentialsRetryInterval)
            await defer_(delivery, app: log.app, logger: log.logger)
            return
        }
        log.logger.error("cannot expand groups: Redis unavailable; the job waits in a delay queue", metadata: [LogKeys.error: "\(error)"])
        await defer_(delivery, app: log.app, logger: log.logger)
    }

    static func isRedisConfigurationError(_ error: RedisError) -> Bool {
        guard error.code == .reply else { return false }
        return ["WRONGTYPE", "NOAUTH", "NOPERM", "WRONGPASS"].contains { error.message.hasPrefix($0) || error.message.contains(" \($0)") }
    }
}
