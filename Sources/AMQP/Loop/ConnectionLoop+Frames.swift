/// Reacting to frames from the broker (owner thread only).
extension ConnectionLoop {
    func handle(_ frame: InboundFrame, on connection: AMQPConnection) throws(AMQPError) {
        switch frame {
        case .deliver(let channel, let consumerTag, let deliveryTag, let redelivered, let exchange, let routingKey,
                      let properties, let body, let discardedBodySize):
            guard channel == Self.consumeChannel, let consumer = consumers.deliveryConsumer(wireTag: consumerTag) else {
                logger.warning("AMQP delivery for an unknown consumer requeued", metadata: [LogKeys.consumer: "\(consumerTag)"])
                try connection.nack(channel: channel, deliveryTag: deliveryTag, multiple: false, requeue: true)
                return
            }
            policy.delivered(deliveryTag)
            consumer.handler(AMQPDelivery(
                tag: AMQPDeliveryTag(connectionGeneration: generation, value: deliveryTag), body: body,
                properties: properties, exchange: exchange, routingKey: routingKey, redelivered: redelivered,
                discardedBodySize: discardedBodySize))

        case .publisherAck(let channel, let deliveryTag, let multiple):
            guard channel == Self.publishChannel else { return }
            complete(policy.confirmed(deliveryTag, multiple: multiple, nacked: false, now: .now))

        case .publisherNack(let channel, let deliveryTag, let multiple):
            guard channel == Self.publishChannel else { return }
            complete(policy.confirmed(deliveryTag, multiple: multiple, nacked: true, now: .now))

        case .returned(let channel, let replyCode, let replyText, let exchange, let routingKey, let properties, let bodyCount):
            guard channel == Self.publishChannel else { return }
            let key = PublishConfirms.ReturnKey(exchange: exchange, routingKey: routingKey, bodyCount: bodyCount, properties: properties)
            if !policy.returned(key, replyCode: replyCode, replyText: replyText) {
                logger.warning("AMQP basic.return matched no outstanding mandatory publish",
                               metadata: [LogKeys.exchange: "\(exchange)", LogKeys.routingKey: "\(routingKey)"])
            }

        case .consumerCancelled(_, let wireTag):
            // A cancel of an earlier consume of ours is stale: that consumer is already gone.
            guard let consumerTag = consumers.tag(forWireTag: wireTag), let consumer = consumers[consumerTag] else { return }
            consumers.cancelledByBroker(consumerTag)
            policy.smallestPrefetch = consumers.smallestActivePrefetch
            logger.warning("AMQP consumer cancelled by broker", metadata: [LogKeys.queue: "\(consumer.queue)"])
            client.onEvent(.consumerCancelledByServer(queue: consumer.queue))

        case .consumeOk(let channel, let wireTag):
            guard channel == Self.consumeChannel, let consumerTag = consumers.tag(forWireTag: wireTag),
                  let consumer = consumers[consumerTag] else { return }
            switch consumers.started(consumerTag) {
            case .none: return
            case .running:
                logger.debug("AMQP consuming", metadata: [LogKeys.queue: "\(consumer.queue)", LogKeys.prefetch: "\(consumer.prefetch)"])
                client.onEvent(.consumerStarted(queue: consumer.queue))
            case .cancelNow:
                try connection.sendCancel(channel: Self.consumeChannel, consumerTag: wireTag)
            }
            policy.smallestPrefetch = consumers.smallestActivePrefetch
            try performHeldAdmin(on: connection)

        case .cancelOk(let channel, let wireTag):
            // A cancel-ok for an earlier consume (its consumer was cancelled by the broker and
            // started again meanwhile) changes nothing.
            guard channel == Self.consumeChannel, let consumerTag = consumers.tag(forWireTag: wireTag) else { return }
            let startAgain = consumers.cancelConfirmed(consumerTag)
            policy.smallestPrefetch = consumers.smallestActivePrefetch
            if startAgain { try start(consumerTag, on: connection) }
            try performHeldAdmin(on: connection)

        case .channelClosed(let channel, let error, let causedByConsume):
            switch channel {
            case Self.publishChannel:
                // E.g. publish to a missing exchange (404). Publishes in flight on the old channel
                // are lost; a fresh channel restarts confirm numbering at 1.
                logger.warning("AMQP publish channel closed by broker; reopening", metadata: [LogKeys.error: "\(error)"])
                complete(policy.publishChannelClosed(error))
                try connection.openChannel(Self.publishChannel)
                try connection.confirmSelect(Self.publishChannel)
            case Self.adminChannel:
                logger.debug("AMQP admin channel closed by broker", metadata: [LogKeys.error: "\(error)"])
            default:
                // A refused consume (most likely its queue does not exist) stops that consumer and
                // the application hears of it: a silent stop would look like an empty queue.
                if causedByConsume, let tag = consumers.consumeRefused(), let queue = consumers[tag]?.queue {
                    policy.smallestPrefetch = consumers.smallestActivePrefetch
                    logger.error("AMQP consume failed", metadata: [LogKeys.queue: "\(queue)", LogKeys.error: "\(error)"])
                    client.onEvent(.consumeFailed(queue: queue, reason: "\(error)"))
                }
                // Consume channel: its delivery tags are void, so start over with a new generation.
                throw error
            }

        case .connectionClosed(let error):
            throw error

        case .blocked(let reason):
            policy.brokerBlocked()
            logger.warning("AMQP connection blocked by broker", metadata: [LogKeys.reason: "\(reason)"])
            client.onEvent(.blocked(reason: reason))

        case .unblocked:
            let held = policy.brokerUnblocked(now: .now)
            logger.info("AMQP connection unblocked")
            client.onEvent(.unblocked)
            try publish(held, on: connection)

        case .other(let channel, let methodID):
            logger.debug("AMQP ignored method", metadata: [LogKeys.channel: "\(channel)", LogKeys.method: "\(methodID)"])
        }
    }

    /// Admin requests held while a consumer change was in flight, once none is.
    func performHeldAdmin(on connection: AMQPConnection) throws(AMQPError) {
        guard !consumers.changeInFlight, !adminAfterCancel.isEmpty else { return }
        let held = adminAfterCancel
        adminAfterCancel = []
        try perform(held, on: connection)
    }
}
