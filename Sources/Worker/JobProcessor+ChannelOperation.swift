import AMQP
import BroadcastChannels
import Logging
import PushCore
import PushTransport

/// Channel-operation jobs (`channel_op`): the app's transport creates or deletes the channel at
/// the platform, the registry in Redis follows, and an event answers; then the job is acked.
extension JobProcessor {
    /// What a `channel_op` message asks, or why it cannot be done.
    func channelOperationPlan(_ delivery: AMQPDelivery) -> JobPlan {
        let operation: ChannelOperation
        do {
            // The platform checks the channel id (`isChannelID`) once the app is known.
            operation = try ChannelOperation(delivery.body, messageID: delivery.properties.messageID, makeID: JobID.next) { _ in true }
        } catch {
            return .reject(error)
        }
        guard let app = roster.current.apps[operation.app] else {
            let apps = roster.current.apps.keys.joined(separator: ", ")
            return .unknownApp(operation.app, rejection: JobRejection(field: "app", "unknown app \"\(operation.app)\" (this worker serves: \(apps))"))
        }
        guard let manager = app.transport as? any BroadcastChannelManaging else {
            return .reject(JobRejection(field: ChannelOperation.field, "app \"\(operation.app)\" sends with \(app.rules.platformName), which has no broadcast channels"))
        }
        if case let .delete(channel) = operation.kind, !manager.isChannelID(channel) {
            return .reject(JobRejection(field: "channel", "is not a channel id of \(app.rules.platformName)"))
        }
        return .manageChannel(operation)
    }

    func manageChannel(_ operation: ChannelOperation, delivery: AMQPDelivery, now: UnixTime) async {
        var operationLogger = self.logger
        operationLogger[metadataKey: LogKeys.app] = "\(operation.app)"
        operationLogger[metadataKey: LogKeys.jobID] = "\(operation.id)"
        let logger = operationLogger
        // Checked when planned; a reload since may have changed the app.
        guard let manager = roster.current.apps[operation.app]?.transport as? any BroadcastChannelManaging else {
            return await reject(delivery, JobRejection(field: "app", "app \"\(operation.app)\" has no broadcast channels any more"), now: now)
        }
        let event: PushEvent
        do throws(ChannelManagementError) {
            switch operation.kind {
            case let .create(storagePolicy, label, endsAt):
                let id = try await manager.createChannel(storagePolicy: storagePolicy)
                await record(ChannelRecord(id: id, storagePolicy: storagePolicy, createdAt: now.milliseconds,
                                           label: label.map(ChannelRecord.bounded), endsAt: endsAt.map { Int64($0) * 1000 }),
                             app: operation.app, logger: logger)
                logger.notice("broadcast channel created", metadata: ["push.channel": "\(id)"])
                event = .channelCreated(channel: id, storagePolicy: storagePolicy, label: label, endsAt: endsAt)
            case let .delete(channel):
                do throws(ChannelManagementError) {
                    try await manager.deleteChannel(channel)
                } catch where error.reason == "ChannelNotRegistered" {
                    // Already gone: the operation's aim holds (a redelivered delete lands here).
                }
                do {
                    try await channels.remove(channel, app: operation.app)
                } catch {
                    logger.warning("the channel is deleted; its record stays in Redis until the next delete or prune", metadata: [LogKeys.error: "\(error)"])
                }
                logger.notice("broadcast channel deleted", metadata: ["push.channel": "\(channel)"])
                event = .channelDeleted(channel: channel)
            }
        } catch where error.isRetryable {
            // APNs said it did not do it: the operation waits in a delay queue and is tried again.
            logger.warning("the channel operation was refused for now; it waits in a delay queue", metadata: [LogKeys.error: "\(error)"])
            return await defer_(delivery, app: operation.app, logger: logger)
        } catch {
            // Refused for good, or no answer at all (a create may then have happened: the event says so).
            let channel: String? = if case let .delete(channel) = operation.kind { channel } else { nil }
            let reason = error.status == 0 ? "\(error.reason): \(error.description)" : error.reason
            logger.warning("channel operation failed", metadata: [LogKeys.error: "\(error)"])
            event = .channelFailed(operation: operation.name, channel: channel, status: error.status, reason: reason)
        }
        let message = ResultPublisher.Message(exchange: configuration.resultsExchange, routingKey: event.routingKey,
                                              body: event.body(jobID: operation.id, app: operation.app, time: now),
                                              properties: Self.eventProperties)
        guard await results.publish([message], logger: logger) else { return }
        amqp.ack(delivery.tag)
        status.metrics.eventsPublished.increment()
    }

    /// The new channel's record, and the warning from 90% of the platform's 10,000 channels.
    private func record(_ record: ChannelRecord, app: String, logger: Logger) async {
        do {
            try await channels.save(record, app: app)
            let count = try await channels.count(app: app)
            if let warning = ChannelRegistry.capWarning(count: count, limit: ChannelRegistry.platformLimit) { logger.warning("\(warning)") }
        } catch {
            logger.warning("the channel was created but its record could not be written to Redis: broadcasts on it go with the job's expiration until `pushworker channels show` records it",
                           metadata: [LogKeys.error: "\(error)"])
        }
    }
}
