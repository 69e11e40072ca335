internal import CRabbitMQ

/// A frame from the broker, already copied out of rabbitmq-c memory.
enum InboundFrame {
    /// `discardedBodySize`: the body was larger than the consumer's limit; `body` holds only its
    /// start and the rest was read and thrown away.
    case deliver(channel: UInt16, consumerTag: String, deliveryTag: UInt64, redelivered: Bool,
                 exchange: String, routingKey: String, properties: AMQPProperties, body: [UInt8], discardedBodySize: Int?)
    case publisherAck(channel: UInt16, deliveryTag: UInt64, multiple: Bool)
    case publisherNack(channel: UInt16, deliveryTag: UInt64, multiple: Bool)
    case returned(channel: UInt16, replyCode: UInt16, replyText: String, exchange: String, routingKey: String,
                  properties: AMQPProperties, bodyCount: Int)
    case consumerCancelled(channel: UInt16, consumerTag: String)
    /// The answer to our basic.cancel (`sendCancel`): the consumer gets no more deliveries.
    case cancelOk(channel: UInt16, consumerTag: String)
    /// The answer to our basic.consume (`sendConsume`): deliveries for the tag follow.
    case consumeOk(channel: UInt16, consumerTag: String)
    /// The server closed a channel; channel.close-ok was already sent. `causedByConsume`: the
    /// close names basic.consume as the method that failed.
    case channelClosed(channel: UInt16, error: AMQPError, causedByConsume: Bool)
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
    /// `bodyLimit` gives, per consumer tag, the largest delivery body to read into memory.
    func readFrame(bodyLimit: (String) -> Int = { _ in .max }) throws(AMQPError) -> InboundFrame? {
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
            let content = try readContent(channel: channel, bodyLimit: bodyLimit(consumerTag))
            return .deliver(channel: channel, consumerTag: consumerTag, deliveryTag: deliver.delivery_tag,
                            redelivered: deliver.redelivered != 0, exchange: exchange, routingKey: routingKey,
                            properties: content.properties, body: content.body, discardedBodySize: content.discardedBodySize)
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
            // Only the size matters for matching the return: the body is not kept.
            let content = try readContent(channel: channel, bodyLimit: 0)
            return .returned(channel: channel, replyCode: returned.reply_code, replyText: replyText, exchange: exchange,
                             routingKey: routingKey, properties: content.properties, bodyCount: content.discardedBodySize ?? 0)
        case AMQP_BASIC_CANCEL_METHOD:
            let cancel = decoded.assumingMemoryBound(to: amqp_basic_cancel_t.self).pointee
            let consumerTag = Self.string(cancel.consumer_tag)
            if cancel.nowait == 0 { try sendCancelOk(channel: channel, consumerTag: consumerTag) }
            return .consumerCancelled(channel: channel, consumerTag: consumerTag)
        case AMQP_BASIC_CONSUME_OK_METHOD:
            let ok = decoded.assumingMemoryBound(to: amqp_basic_consume_ok_t.self).pointee
            return .consumeOk(channel: channel, consumerTag: Self.string(ok.consumer_tag))
        case AMQP_BASIC_CANCEL_OK_METHOD:
            let ok = decoded.assumingMemoryBound(to: amqp_basic_cancel_ok_t.self).pointee
            return .cancelOk(channel: channel, consumerTag: Self.string(ok.consumer_tag))
        case AMQP_CHANNEL_CLOSE_METHOD:
            let close = decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
            // channel.close carries the class and method ids of the method that caused it.
            let causedByConsume = (UInt32(close.class_id) << 16 | UInt32(close.method_id)) == AMQP_BASIC_CONSUME_METHOD
            return .channelClosed(channel: channel, error: serverClose(method, channel: channel, "broker"), causedByConsume: causedByConsume)
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

    /// How much of an over-limit body is kept, for the dead-letter copy and the rejection event.
    static let keptPrefixOfDiscardedBody = AMQPDelivery.keptBodyPrefix
    /// The most memory reserved for a body before its frames arrive; a larger one grows as they do.
    static let largestUpFrontReservation = 1 << 20

    /// Reads the content header and body frames that follow basic.deliver / get-ok / return.
    /// The header announces the body's size: a body above `bodyLimit` is read frame by frame and
    /// thrown away (only its first `keptPrefixOfDiscardedBody` bytes kept), so a huge message
    /// never sits in memory. (rabbitmq-c's `amqp_read_message` would allocate it whole.)
    func readContent(channel: UInt16, bodyLimit: Int) throws(AMQPError) -> (properties: AMQPProperties, body: [UInt8], discardedBodySize: Int?) {
        var frame = amqp_frame_t()
        try waitFrame(on: channel, &frame)
        guard frame.frame_type == AMQP_FRAME_HEADER else {
            isBroken = true
            throw AMQPError(code: .library, message: "expected a content header on channel \(channel), got frame type \(frame.frame_type)")
        }
        let properties = Self.decode(properties: frame.payload.properties.decoded.assumingMemoryBound(to: amqp_basic_properties_t.self).pointee)
        let size = Int(clamping: frame.payload.properties.body_size)
        let discarding = size > bodyLimit
        let keep = discarding ? min(size, Self.keptPrefixOfDiscardedBody) : size
        var body: [UInt8] = []
        // The announced size is only a claim until the frames arrive: reserving it whole let one
        // header (found by Fuzz/FuzzAMQPFrames) abort the process on a failed allocation.
        body.reserveCapacity(min(keep, Self.largestUpFrontReservation))
        var received = 0
        while received < size {
            try waitFrame(on: channel, &frame)
            guard frame.frame_type == AMQP_FRAME_BODY else {
                isBroken = true
                throw AMQPError(code: .library, message: "expected a body frame on channel \(channel), got frame type \(frame.frame_type)")
            }
            let fragment = frame.payload.body_fragment
            let wanted = max(0, min(fragment.len, keep - body.count))
            if wanted > 0 {
                body.append(contentsOf: UnsafeRawBufferPointer(start: fragment.bytes, count: wanted))
            }
            received += fragment.len
            // The fragment is copied: free its frame now, so a discarded body costs one frame of memory.
            if discarding { amqp_maybe_release_buffers_on_channel(state, channel) }
        }
        guard received == size else {
            isBroken = true
            throw AMQPError(code: .library, message: "body frames on channel \(channel) carried \(received) bytes; the header announced \(size)")
        }
        return (properties, body, discarding ? size : nil)
    }

    /// The next frame, which must be on `channel`: the broker writes a message's method, header and
    /// body frames together, and rabbitmq-c queues frames it read early in arrival order, so a
    /// frame of another channel here means the stream is out of step. (rabbitmq-c 0.11 does not
    /// export its `amqp_simple_wait_frame_on_channel`.)
    private func waitFrame(on channel: UInt16, _ frame: inout amqp_frame_t) throws(AMQPError) {
        let status = amqp_simple_wait_frame(state, &frame)
        guard status == AMQP_STATUS_OK.rawValue else {
            isBroken = true
            throw libraryError(status, "reading message content")
        }
        guard frame.channel == channel else {
            isBroken = true
            throw AMQPError(code: .library, message: "a frame of channel \(frame.channel) arrived inside a message on channel \(channel)")
        }
    }
}
