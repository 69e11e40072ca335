import AMQP
import PushCore
import PushTransport

/// The task path's stages after the plan: reject, expand, expire or send, then one tally.
extension JobProcessor {
    /// Everything up to settling. Returns what is still to settle, or nil when the delivery was
    /// already settled here (rejected, fanned out, deferred or held).
    func carryOut(_ plan: JobPlan, delivery: AMQPDelivery, started: ContinuousClock.Instant,
                  now: UnixTime) async -> (Settlement, JobLog)? {
        var job: PushJob
        var devices: [DeviceToken]
        switch plan {
        case .reject(let rejection):
            await reject(delivery, rejection, now: now)
            return nil
        case .manageChannel(let operation):
            await manageChannel(operation, delivery: delivery, now: now)
            return nil
        case .unknownApp(let app, let rejection):
            await holdOrReject(delivery, unknownApp: app, rejection: rejection, now: now)
            return nil
        case .send(let named), .expire(let named):
            job = named
            devices = named.tokens
        case .expand(let named):
            job = named
            devices = []
        }
        if job.bulk, !isInBulkLane(delivery) {
            await moveToBulkLane(delivery, log: JobLog(logger, job: job))
            return nil
        }
        if gate.isHeld(app: job.app), !JobPlan.isExpired(job, now: now) {
            await holdBack(delivery, job: job)
            return nil
        }
        let log = JobLog(logger, job: job)
        if let channel = job.options.channel, !JobPlan.isExpired(job, now: now) {
            guard let prepared = await preparedBroadcast(job, channel: channel, delivery: delivery, log: log) else { return nil }
            job = prepared
        }
        var settlement = Settlement(job: job, now: now)
        if case .expand = plan {
            guard let inline = await fanOut(job, delivery: delivery, settlement: &settlement, started: started, log: log) else { return nil }
            devices = inline
        }
        if JobPlan.isExpired(job, now: now) {
            settlement.counts.devices += devices.count
            for device in devices { settlement.fail(device, status: 0, reason: "Expired") }
        } else if !devices.isEmpty, roster.app(for: job) == nil {
            // Unreachable while the roster keeps each generation until its jobs leave; said, not a crash.
            log.logger.error("no app \(job.app) of the job's platform in any generation; its devices fail")
            settlement.counts.devices += devices.count
            for device in devices { settlement.fail(device, status: 0, reason: "AppChangedPlatform") }
        } else if !devices.isEmpty {
            let app = roster.app(for: job)!
            let transport = app.transport
            let ids = RequestIDRange(count: devices.count)
            var results = await DeliveryRound.send(job, to: devices, ids: ids, with: transport, budget: devicesInFlight,
                                                   deliveredAt: started, latency: status.latency, roundTrip: app.metrics.roundTrip)
            await refreshCredentialsIfAsked(job, devices: devices, ids: ids, results: &results, transport: transport, log: log)
            tally(&settlement, devices: devices, results: results, ids: ids, app: app, started: started)
            if let channel = job.options.channel, settlement.counts.sent > 0 { await noteBroadcast(channel, app: job.app, now: now, log: log) }
            return (settlement, log)
        }
        settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
        return (settlement, log)
    }

    /// The one tally of a round's answers, for both paths.
    func tally(_ settlement: inout Settlement, devices: [DeviceToken], results: [PushResult], ids: RequestIDRange,
               app: ServedApp, started: ContinuousClock.Instant) {
        settlement.counts.devices += devices.count
        settlement.requestIDsAreCarried = app.transport.carriesRequestIDs
        settlement.appMetrics = app.metrics
        if app.transport.carriesRequestIDs { settlement.sent(with: ids) }
        let screened = app.breaker.screen(results, job: settlement.job, transport: app.transport)
        settlement.record(devices, screened, retry: configuration.retry)
        settlement.counts.durationMilliseconds = Self.milliseconds(since: started)
    }

    /// Stale credentials (APNs' ExpiredProviderToken): the transport renews them and the devices go
    /// out once more, through the same round (and devices-in-flight budget) as the first time.
    func refreshCredentialsIfAsked(_ job: PushJob, devices: [DeviceToken], ids: RequestIDRange, results: inout [PushResult],
                                   transport: any PushTransport, log: JobLog) async {
        let resent = await transport.renewCredentialsAndResend(&results) { stale in
            await DeliveryRound.send(job, to: stale.map { devices[$0] }, ids: ids, positions: stale, with: transport,
                                     budget: devicesInFlight, deliveredAt: .now, latency: status.latency)
        }
        if resent > 0 {
            log.logger.notice("the platform said the credentials expired; renewed them and resent", metadata: [LogKeys.devices: "\(resent)"])
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
