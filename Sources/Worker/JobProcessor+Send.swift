import AMQP
import PushCore
import PushTransport

/// The task path's stages after the plan (`JobStages`): reject, expand, expire or send, then one tally.
extension JobProcessor {
    /// Everything up to settling: asks `JobStages` for each step and performs it. Returns what is
    /// still to settle, or nil when the delivery was already settled here (rejected, fanned out,
    /// deferred or held).
    func carryOut(_ plan: JobPlan, delivery: AMQPDelivery, started: ContinuousClock.Instant,
                  now: UnixTime) async -> (Settlement, JobLog)? {
        var stages = JobStages(inBulkLane: isInBulkLane(delivery), now: now)
        var step = stages.first(plan, isHeld: gate.isHeld(app:))
        // Made once the job is as it is sent (a broadcast's expiration may change first).
        var carried: Carried?
        func opened(_ job: PushJob) -> Carried {
            carried ?? Carried(settlement: Settlement(job: job, now: now), log: JobLog(logger, job: job))
        }
        while true {
            switch step {
            case .reject(let rejection):
                await reject(delivery, rejection, now: now)
                step = .stop
            case .manageChannel(let operation):
                await manageChannel(operation, delivery: delivery, now: now)
                step = .stop
            case .holdOrReject(let app, let rejection):
                await holdOrReject(delivery, unknownApp: app, rejection: rejection, now: now)
                step = .stop
            case .moveToBulkLane(let job):
                await moveToBulkLane(delivery, log: JobLog(logger, job: job))
                step = .stop
            case .holdBack(let job):
                await holdBack(delivery, job: job)
                step = .stop
            case .prepareBroadcast(let job, let channel):
                step = stages.prepared(await preparedBroadcast(job, channel: channel, delivery: delivery, log: JobLog(logger, job: job)))
            case .fanOut(let job):
                var open = opened(job)
                let inline = await fanOut(job, delivery: delivery, settlement: &open.settlement, started: started, log: open.log)
                carried = open
                step = stages.fannedOut(inline)
            case .fail(let job, let devices, let reason):
                var open = opened(job)
                open.settlement.counts.devices += devices.count
                for device in devices { open.settlement.fail(device, status: 0, reason: reason) }
                carried = open
                step = stages.failed()
            case .send(let job, let devices):
                var open = opened(job)
                let log = open.log
                // Parsing found the app; a reload since keeps it until this job settles.
                guard let app = roster.app(for: job) else {
                    // Unreachable while the roster keeps each generation until its jobs leave; said, not a crash.
                    log.logger.error("no app \(job.app) of the job's platform in any generation; its devices fail")
                    carried = open
                    step = stages.noApp()
                    continue
                }
                let transport = app.transport
                let ids = RequestIDRange(count: devices.count)
                var results = await DeliveryRound.send(job, to: devices, ids: ids, with: transport, budget: devicesInFlight,
                                                       deliveredAt: started, latency: status.latency, roundTrip: app.metrics.roundTrip)
                await refreshCredentialsIfAsked(job, devices: devices, ids: ids, results: &results, transport: transport, log: log)
                tally(&open.settlement, devices: devices, results: results, ids: ids, app: app, started: started)
                carried = open
                step = stages.sent(open.settlement.counts.sent)
            case .noteBroadcast(let job, let channel):
                await noteBroadcast(channel, app: job.app, now: now, log: opened(job).log)
                step = stages.noted()
            case .settle(let job, let timed):
                var open = opened(job)
                if !timed { open.settlement.counts.durationMilliseconds = Self.milliseconds(since: started) }
                return (open.settlement, open.log)
            case .stop:
                return nil
            }
        }
    }

    /// What `carryOut` settles, once the job is opened.
    struct Carried {
        var settlement: Settlement
        let log: JobLog
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
