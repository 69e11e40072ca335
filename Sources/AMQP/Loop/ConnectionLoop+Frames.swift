/// Frames from the broker, fed to the machine (owner thread only).
extension ConnectionLoop {
    func handle(_ frame: InboundFrame, on connection: AMQPConnection) throws(AMQPError) {
        switch frame {
        case .deliver(let channel, let consumerTag, let deliveryTag, let redelivered, let exchange, let routingKey,
                      let properties, let body, let discardedBodySize):
            switch machine.delivered(channel: channel, wireTag: consumerTag, deliveryTag: deliveryTag) {
            case .deliver(let index, let tag):
                consumerCallbacks[index].handler(AMQPDelivery(
                    tag: tag, body: body, properties: properties, exchange: exchange, routingKey: routingKey,
                    redelivered: redelivered, discardedBodySize: discardedBodySize))
            case let other:
                try perform(other, on: connection)
            }

        case .publisherAck(let channel, let deliveryTag, let multiple):
            if let action = machine.confirmed(channel: channel, deliveryTag: deliveryTag, multiple: multiple, nacked: false, now: .now) {
                try perform(action, on: connection)
            }

        case .publisherNack(let channel, let deliveryTag, let multiple):
            if let action = machine.confirmed(channel: channel, deliveryTag: deliveryTag, multiple: multiple, nacked: true, now: .now) {
                try perform(action, on: connection)
            }

        case .returned(let channel, let replyCode, let replyText, let exchange, let routingKey, let properties, let bodyCount):
            let key = PublishConfirms<PublishRequest>.ReturnKey(exchange: exchange, routingKey: routingKey, bodyCount: bodyCount, properties: properties)
            if !machine.returned(channel: channel, key, replyCode: replyCode, replyText: replyText) {
                logger.warning("AMQP basic.return matched no outstanding mandatory publish",
                               metadata: [LogKeys.exchange: "\(exchange)", LogKeys.routingKey: "\(routingKey)"])
            }

        case .consumerCancelled(_, let wireTag):
            try perform(machine.cancelledByBroker(wireTag: wireTag), on: connection)

        case .consumeOk(let channel, let wireTag):
            try perform(machine.consumeOk(channel: channel, wireTag: wireTag), on: connection)

        case .cancelOk(let channel, let wireTag):
            try perform(machine.cancelOk(channel: channel, wireTag: wireTag), on: connection)

        case .channelClosed(let channel, let error, let causedByConsume):
            switch channel {
            case ConnectionChannels.publish:
                // E.g. a publish to a missing exchange (404).
                logger.warning("AMQP publish channel closed by broker; reopening", metadata: [LogKeys.error: "\(error)"])
            case ConnectionChannels.admin:
                logger.debug("AMQP admin channel closed by broker", metadata: [LogKeys.error: "\(error)"])
            default:
                break
            }
            try perform(machine.channelClosed(channel: channel, error: error, causedByConsume: causedByConsume), on: connection)

        case .connectionClosed(let error):
            throw error

        case .blocked(let reason):
            try perform(machine.blocked(reason: reason), on: connection)

        case .unblocked:
            try perform(machine.unblocked(now: .now), on: connection)

        case .other(let channel, let methodID):
            logger.debug("AMQP ignored method", metadata: [LogKeys.channel: "\(channel)", LogKeys.method: "\(methodID)"])
        }
    }
}
