import AMQP
import PushCore

extension JobProcessor {
    /// A job for an app this worker does not serve: held in the delay queues while
    /// `--unknown-app-grace` lasts (a rollout may be adding the app: another worker, or this one
    /// after its reload, will send it), then rejected as before. Logged once, when the hold begins.
    func holdOrReject(_ delivery: AMQPDelivery, unknownApp app: String, rejection: JobRejection, now: UnixTime) async {
        let grace = UnknownAppGrace(grace: configuration.unknownAppGrace)
        switch grace.verdict(firstSeen: delivery.properties.headers[UnknownAppGrace.firstSeenHeader], now: now,
                             longestDelay: Self.longestHoldDelay) {
        case .reject:
            await reject(delivery, rejection, now: now)
        case let .hold(firstSeen, longestDelay, begins):
            var logger = self.logger
            logger[metadataKey: LogKeys.app] = "\(app)"
            logger[metadataKey: LogKeys.messageID] = "\(DeadLetterCopy.truncated(delivery.properties.messageID ?? "-", toBytes: 64))"
            if begins {
                logger.warning("job for an app this worker does not serve: held in the delay queues in case a configuration rollout is adding it; rejected if still unknown after the grace", metadata: [
                    LogKeys.unknownAppGrace: "\(DurationText.format(grace.grace))",
                ])
            }
            await defer_(delivery, app: nil, logger: logger, longestDelay: longestDelay,
                         headers: [UnknownAppGrace.firstSeenHeader: .int(firstSeen.milliseconds)])
        }
    }
}
