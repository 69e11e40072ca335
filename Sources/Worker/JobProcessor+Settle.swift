import AMQP
import Logging
import PushCore

/// The end of every job: publish what it owes the broker, then ack. Nothing here sends a
/// notification again: once APNs has answered, only publishing is retried (ResultPublisher).
extension JobProcessor {
    /// Returns whether the job was acked (false: the worker shut down first; it stays unacked).
    @discardableResult
    func settle(_ delivery: AMQPDelivery, _ settlement: Settlement, log: JobLog) async -> Bool {
        await withCheckedContinuation { continuation in
            settle(delivery, settlement, log: log) { continuation.resume(returning: $0) }
        }
    }

    /// Publishes the job's events (and retry or held jobs); once the broker confirmed them all,
    /// acks the delivery and calls `done(true)`. An app that prunes invalid tokens has them removed
    /// from their groups first (`JobProcessor+Prune`).
    func settle(_ delivery: AMQPDelivery, _ settlement: Settlement, log: JobLog, done: @escaping @Sendable (Bool) -> Void) {
        guard prunes(settlement) else { return publish(delivery, settlement, log: log, done: done) }
        run(orElse: { [self] in publish(delivery, settlement, log: log, done: done) }) { [self] in
            var pruned = settlement
            await pruneInvalidTokens(&pruned, log: log)
            publish(delivery, pruned, log: log, done: done)
        }
    }

    /// Carries out the job's `SettlementPlan`: tells the gate, publishes with confirms, then acks.
    private func publish(_ delivery: AMQPDelivery, _ settlement: Settlement, log: JobLog, done: @escaping @Sendable (Bool) -> Void) {
        let job = settlement.job
        var plan = SettlementPlan(settlement, configuration: configuration, time: UnixTime.now())
        if let reason = plan.credentialsRefused {
            // Stop taking jobs at once: every further one would fail the same way.
            gate.credentialsFailed(app: job.app, reason: reason)
        }
        if let reason = plan.platformUnreachable {
            log.logger.warning("the platform is unreachable; the devices wait in the job queue without using an attempt", metadata: [
                LogKeys.devices: "\(settlement.heldTokens.count)", LogKeys.error: "\(reason)",
            ])
            gate.pause(.platformUnavailable(app: job.app), resumeAfter: Self.platformUnavailablePause)
        }
        let appMetrics = settlement.appMetrics ?? roster.app(job.app)?.metrics
        for event in settlement.events {
            switch event {
            case let .deliveryFailed(_, status, reason, _, _, _), let .tokenInvalid(_, reason, status, _, _, _, _),
                 let .broadcastFailed(_, status, reason, _, _):
                appMetrics?.failure(reason: reason, status: status)
            default: break
            }
        }
        for delay in plan.delaysPublished { status.metrics.retryPublished(delay: delay) }
        let counts = settlement.counts
        let eventCount = plan.eventCount
        let publishing = ContinuousClock.now
        let published: @Sendable (Bool) -> Void = { [self] published in
            // Not published only when shutting down: left unacked, the job is redelivered.
            guard published else { return done(false) }
            amqp.ack(delivery.tag)
            status.metrics.eventConfirm.record(seconds: ContinuousClock.now - publishing)
            if eventCount > 0 { status.metrics.eventsPublished.increment(by: eventCount) }
            appMetrics?.record(counts)
            status.recordJob(counts)
            if logsSettledJobs {
                log.logger.debug("job settled", metadata: [
                    "push.sent": "\(counts.sent)", "push.failed": "\(counts.failed)",
                    "push.invalid": "\(counts.invalid)", "push.retried": "\(counts.retried)",
                ])
            }
            done(true)
        }
        if let completion = plan.completion {
            // Most jobs owe only job.completed: then no array is made (`ResultPublisher.publish(_:)`).
            if plan.messages.isEmpty { return results.publish(completion, logger: log.logger, done: published) }
            plan.messages.append(completion)
        }
        results.publish(plan.messages, logger: log.logger, done: published)
    }

    /// How long consumption pauses when the platform cannot be reached; short, so a worker is
    /// sending again within seconds of its return.
    static let platformUnavailablePause: Duration = .seconds(2)

    /// An invalid job goes to the dead queue with a `job.rejected` event, and is acked: it is never
    /// retried, and nothing about it can make it loop. The copy's properties are rebuilt so it
    /// always fits; if the broker refuses it anyway, a copy with minimal properties goes instead.
    func reject(_ delivery: AMQPDelivery, _ rejection: JobRejection, now: UnixTime) async {
        logger.warning("job rejected", metadata: [
            "push.rejection": "\(DeadLetterCopy.truncated(rejection.description, toBytes: DeadLetterCopy.maxErrorBytes))",
            LogKeys.messageID: "\(DeadLetterCopy.truncated(delivery.properties.messageID ?? "-", toBytes: 64))",
        ])
        let copy = ResultPublisher.Message(
            exchange: "", routingKey: configuration.deadQueue, body: delivery.body,
            properties: DeadLetterCopy.properties(of: delivery, rejection: rejection, now: now), mandatory: true,
            fallback: DeadLetterCopy.minimalProperties(rejection: rejection, now: now))
        let excerpt = delivery.discardedBodySize != nil ? DeadLetterCopy.excerpt(of: delivery.body) : nil
        let event = PushEvent.jobRejected(error: DeadLetterCopy.truncated(rejection.description, toBytes: DeadLetterCopy.maxErrorBytes),
                                          field: rejection.field.map { DeadLetterCopy.truncated($0, toBytes: DeadLetterCopy.maxFieldBytes) },
                                          excerpt: excerpt)
        let eventMessage = ResultPublisher.Message(
            exchange: configuration.resultsExchange, routingKey: event.routingKey,
            body: event.body(jobID: Self.bestEffortID(delivery), app: nil, time: now), properties: Self.eventProperties)
        guard await results.publish([copy, eventMessage], logger: self.logger) else { return }
        amqp.ack(delivery.tag)
        status.metrics.eventsPublished.increment()
        status.recordRejection()
    }

    /// Redis is unreachable, the job's app is held back or not known yet: the job waits in a delay
    /// queue (growing delays, up to `longestDelay`; never dead-lettered for an outage) instead of
    /// being requeued at full speed. Its body is kept byte for byte; `headers` are added to its own.
    /// - Parameter app: the served app the job is for (nil for an app this worker does not serve).
    func defer_(_ delivery: AMQPDelivery, app: String?, logger: Logger, longestDelay: Duration? = nil,
                headers: [String: AMQPFieldValue] = [:]) async {
        let deferrals = Self.deferrals(of: delivery)
        // A bulk job comes back to the bulk lane.
        var queues = configuration.retryPolicy(bulk: isInBulkLane(delivery)).queueNames
        if let longestDelay, let first = queues.first {
            queues = queues.filter { $0.delay <= longestDelay }
            if queues.isEmpty { queues = [first] }
        }
        guard let queue = queues.isEmpty ? nil : queues[min(deferrals, queues.count - 1)] else {
            // No delay queues configured: hold the slot a moment so the requeue is not a tight loop.
            try? await Task.sleep(for: .seconds(1))
            amqp.nack(delivery.tag, requeue: true)
            return
        }
        var properties = delivery.properties
        properties.persistent = true
        properties.expiration = nil
        properties.headers[Self.deferralsHeader] = .int(Int64(deferrals + 1))
        var fallback = Self.deferralFallback(of: delivery, deferrals: deferrals + 1)
        for (name, value) in headers {
            properties.headers[name] = value
            fallback.headers[name] = value
        }
        let now = UnixTime.now(), bulk = isInBulkLane(delivery)
        let route = configuration.delayRoute(queue, bulk: bulk, properties: &properties, now: now)
        _ = configuration.delayRoute(queue, bulk: bulk, properties: &fallback, now: now)
        let message = ResultPublisher.Message(exchange: "", routingKey: route, body: delivery.body,
                                              properties: properties, mandatory: true, fallback: fallback)
        guard await results.publish([message], logger: logger) else { return }
        amqp.ack(delivery.tag)
        status.recordDeferral(app: app)
    }

    static let deferralsHeader = "x-pushworker-deferrals"

    /// The properties a deferred job goes with when the publisher's own cannot be encoded (a header
    /// name or a property whose invalid UTF-8 came back longer than the 255 bytes AMQP allows):
    /// without them the job would be dropped. The body is the job; its message id stays if it fits.
    static func deferralFallback(of delivery: AMQPDelivery, deferrals: Int) -> AMQPProperties {
        var properties = AMQPProperties()
        properties.persistent = true
        if let id = delivery.properties.messageID, id.utf8.count <= 255 { properties.messageID = id }
        properties.headers[deferralsHeader] = .int(Int64(deferrals))
        return properties
    }

    static func deferrals(of delivery: AMQPDelivery) -> Int {
        if case .int(let count) = delivery.properties.headers[deferralsHeader] { return max(0, Int(clamping: count)) }
        return 0
    }

    /// A rejected message may still carry a usable id; events should echo it.
    static func bestEffortID(_ delivery: AMQPDelivery) -> String? {
        // Bodies within the limit only (the size was checked before this is called).
        if delivery.discardedBodySize == nil, case .object(let members)? = try? JSONValue.parse(delivery.body),
           case .string(let id)? = members["id"], id.utf8.count <= JobParser.maxIDLength, !id.contains(where: \.isNewline) {
            return id
        }
        guard let id = delivery.properties.messageID, id.utf8.count <= JobParser.maxIDLength,
              !id.unicodeScalars.contains("\u{FFFD}") else { return nil }
        return id
    }

    static let eventProperties: AMQPProperties = {
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.persistent = true
        return properties
    }()
}
