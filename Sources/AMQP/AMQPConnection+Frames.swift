internal import CRabbitMQ

/// A frame from the broker, already copied out of rabbitmq-c memory.
enum InboundFrame {
    case deliver(channel: UInt16, consumerTag: String, deliveryTag: UInt64, redelivered: Bool,
                 exchange: String, routingKey: String, properties: AMQPProperties, body: [UInt8])
    case publisherAck(channel: UInt16, deliveryTag: UInt64, multiple: Bool)
    case publisherNack(channel: UInt16, deliveryTag: UInt64, multiple: Bool)
    case returned(channel: UInt16, replyCode: UInt16, replyText: String, exchange: String, routingKey: String,
                  properties: AMQPProperties, bodyCount: Int)
    case consumerCancelled(channel: UInt16, consumerTag: String)
    /// The server closed a channel; channel.close-ok was already sent.
    case channelClosed(channel: UInt16, error: AMQPError)
    /// The server closed the connection; connection.close-ok was already sent.
    case connectionClosed(AMQPError)
    case blocked(reason: String)
    case unblocked
    case other(channel: UInt16, methodID: UInt32)
}

extension AMQPConnection {
    /// Reads one frame without waiting; nil when neither the library's buffers nor the socket
    /// have one. Also sends due heartbeats and detects missed ones (the library only does this
    /// inside calls like this one).
    func readFrame() throws(AMQPError) -> InboundFrame? {
        var frame = amqp_frame_t()
        var noWait = Self.timeval(.zero)
        let status = amqp_simple_wait_frame_noblock(state, &frame, &noWait)
        if status == AMQP_STATUS_TIMEOUT.rawValue { return nil }
        if status != AMQP_STATUS_OK.rawValue {
            isBroken = true
            throw libraryError(status, "reading from broker")
        }
        guard frame.frame_type == AMQP_FRAME_METHOD else {
            // Content without a method we asked for means we lost track of the stream.
            isBroken = true
            throw AMQPError(code: .library, message: "unexpected frame type \(frame.frame_type) on channel \(frame.channel)")
        }
        let channel = frame.channel
        let method = frame.payload.method
        guard let decoded = method.decoded else { return .other(channel: channel, methodID: method.id) }

        switch method.id {
        case AMQP_BASIC_DELIVER_METHOD:
            let deliver = decoded.assumingMemoryBound(to: amqp_basic_deliver_t.self).pointee
            let consumerTag = Self.string(deliver.consumer_tag)
            let exchange = Self.string(deliver.exchange)
            let routingKey = Self.string(deliver.routing_key)
            let (properties, body) = try readContent(channel: channel)
            return .deliver(channel: channel, consumerTag: consumerTag, deliveryTag: deliver.delivery_tag,
                            redelivered: deliver.redelivered != 0, exchange: exchange, routingKey: routingKey,
                            properties: properties, body: body)
        case AMQP_BASIC_ACK_METHOD:
            let ack = decoded.assumingMemoryBound(to: amqp_basic_ack_t.self).pointee
            return .publisherAck(channel: channel, deliveryTag: ack.delivery_tag, multiple: ack.multiple != 0)
        case AMQP_BASIC_NACK_METHOD:
            let nack = decoded.assumingMemoryBound(to: amqp_basic_nack_t.self).pointee
            return .publisherNack(channel: channel, deliveryTag: nack.delivery_tag, multiple: nack.multiple != 0)
        case AMQP_BASIC_RETURN_METHOD:
            let returned = decoded.assumingMemoryBound(to: amqp_basic_return_t.self).pointee
            let replyText = Self.string(returned.reply_text)
            let exchange = Self.string(returned.exchange)
            let routingKey = Self.string(returned.routing_key)
            let (properties, body) = try readContent(channel: channel)
            return .returned(channel: channel, replyCode: returned.reply_code, replyText: replyText, exchange: exchange,
                             routingKey: routingKey, properties: properties, bodyCount: body.count)
        case AMQP_BASIC_CANCEL_METHOD:
            let cancel = decoded.assumingMemoryBound(to: amqp_basic_cancel_t.self).pointee
            let consumerTag = Self.string(cancel.consumer_tag)
            if cancel.nowait == 0 { try sendCancelOk(channel: channel, consumerTag: consumerTag) }
            return .consumerCancelled(channel: channel, consumerTag: consumerTag)
        case AMQP_CHANNEL_CLOSE_METHOD:
            return .channelClosed(channel: channel, error: serverClose(method, channel: channel, "broker"))
        case AMQP_CONNECTION_CLOSE_METHOD:
            return .connectionClosed(serverClose(method, channel: channel, "broker"))
        case AMQP_CONNECTION_BLOCKED_METHOD:
            let blocked = decoded.assumingMemoryBound(to: amqp_connection_blocked_t.self).pointee
            return .blocked(reason: Self.string(blocked.reason))
        case AMQP_CONNECTION_UNBLOCKED_METHOD:
            return .unblocked
        default:
            return .other(channel: channel, methodID: method.id)
        }
    }

    /// Reads the header and body frames that follow basic.deliver / get-ok / return.
    func readContent(channel: UInt16) throws(AMQPError) -> (AMQPProperties, [UInt8]) {
        var message = amqp_message_t()
        // amqp_read_message leaves a zeroed message on failure, which destroy accepts.
        defer { amqp_destroy_message(&message) }
        let reply = amqp_read_message(state, channel, &message, 0)
        try check(reply, channel: channel, "reading message content")
        return (Self.decode(properties: message.properties), Self.array(message.body))
    }
}
