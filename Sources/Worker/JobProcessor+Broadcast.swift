import AMQP
import BroadcastChannels
import PushCore

/// A broadcast job's step before its one request: the channel's record in Redis decides the
/// expiration, and a sent broadcast is noted there.
extension JobProcessor {
    /// The job as it is sent: on a channel that stores nothing APNs refuses any expiration but 0
    /// (Apple's broadcast page), so the record's storage policy overrides the job's. A channel the
    /// registry does not know (made elsewhere) goes with the job's own. Nil when Redis could not
    /// be read: the delivery then waits in a delay queue, as a group job does.
    func preparedBroadcast(_ job: PushJob, channel: String, delivery: AMQPDelivery, log: JobLog) async -> PushJob? {
        let record: ChannelRecord?
        do {
            record = try await channels.record(channel, app: job.app)
        } catch {
            log.logger.warning("cannot read the broadcast channel's record in Redis; the job waits in a delay queue",
                               metadata: [LogKeys.error: "\(error)"])
            await defer_(delivery, app: job.app, logger: log.logger)
            return nil
        }
        guard let record, record.storagePolicy == 0, job.expiration != 0 else { return job }
        log.logger.notice("the channel stores no messages (storage policy 0): the broadcast is sent with apns-expiration 0, not the job's expiration")
        var prepared = job
        prepared.expiration = 0
        return prepared
    }

    /// Best effort: the record's last broadcast is for people (`channels list`), not for delivery.
    func noteBroadcast(_ channel: String, app: String, now: UnixTime, log: JobLog) async {
        do {
            try await channels.noteBroadcast(channel, app: app, at: now.milliseconds)
        } catch {
            log.logger.debug("could not note the broadcast in Redis", metadata: [LogKeys.error: "\(error)"])
        }
    }
}
