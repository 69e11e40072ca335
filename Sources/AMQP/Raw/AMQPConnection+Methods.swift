internal import CRabbitMQ

/// AMQP methods the owner thread sends: channel set-up, consuming, acks, publishing and the
/// synchronous queue/exchange RPCs (bounded by the RPC timeout).
extension AMQPConnection {
    func openChannel(_ channel: UInt16) throws(AMQPError) {
        try flushFrames()
        _ = amqp_channel_open(state, channel)
        try check(amqp_get_rpc_reply(state), channel: channel, "channel.open \(channel)")
        openChannels.insert(channel)
    }

    func confirmSelect(_ channel: UInt16) throws(AMQPError) {
        try flushFrames()
        _ = amqp_confirm_select(state, channel)
        try check(amqp_get_rpc_reply(state), channel: channel, "confirm.select")
    }

    func qos(channel: UInt16, prefetch: UInt16) throws(AMQPError) {
        try flushFrames()
        // global=0: RabbitMQ applies the limit to each consumer created afterwards on this channel.
        _ = amqp_basic_qos(state, channel, 0, prefetch, 0)
        try check(amqp_get_rpc_reply(state), channel: channel, "basic.qos")
    }

    func consume(channel: UInt16, queue: String, consumerTag: String) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        _ = amqp_basic_consume(state, channel, try scratchBytes(queue), try scratchBytes(consumerTag), 0, 0, 0,
                               amqp_table_t(num_entries: 0, entries: nil))
        try check(amqp_get_rpc_reply(state), channel: channel, "basic.consume on '\(queue)'")
    }

    /// basic.cancel, not waited for: its cancel-ok comes back through `readFrame` behind the
    /// deliveries still in flight, which pass the body limit there. (rabbitmq-c's
    /// `amqp_basic_cancel` would wait, and queue every delivery meanwhile whole in its memory.)
    func sendCancel(channel: UInt16, consumerTag: String) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        var cancel = amqp_basic_cancel_t(consumer_tag: try scratchBytes(consumerTag), nowait: 0)
        try checkWrite(amqp_send_method(state, channel, AMQP_BASIC_CANCEL_METHOD, &cancel), "basic.cancel")
    }

    /// basic.qos and basic.consume, not waited for: their answers come back through `readFrame`
    /// (`consumeOk`). Waiting in place (`amqp_basic_consume`) would queue, whole, every delivery of
    /// the connection's other consumers that arrives meanwhile.
    func sendConsume(channel: UInt16, queue: String, consumerTag: String, prefetch: UInt16) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        // global=0: RabbitMQ applies the limit to each consumer created afterwards on this channel.
        var qos = amqp_basic_qos_t(prefetch_size: 0, prefetch_count: prefetch, global: 0)
        try checkWrite(amqp_send_method(state, channel, AMQP_BASIC_QOS_METHOD, &qos), "basic.qos")
        var consume = amqp_basic_consume_t(ticket: 0, queue: try scratchBytes(queue), consumer_tag: try scratchBytes(consumerTag),
                                           no_local: 0, no_ack: 0, exclusive: 0, nowait: 0,
                                           arguments: amqp_table_t(num_entries: 0, entries: nil))
        try checkWrite(amqp_send_method(state, channel, AMQP_BASIC_CONSUME_METHOD, &consume), "basic.consume on '\(queue)'")
    }

    /// Answers a server-initiated basic.cancel that asked for a reply.
    func sendCancelOk(channel: UInt16, consumerTag: String) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        var ok = amqp_basic_cancel_ok_t(consumer_tag: try scratchBytes(consumerTag))
        try checkWrite(amqp_send_method(state, channel, AMQP_BASIC_CANCEL_OK_METHOD, &ok), "basic.cancel-ok")
    }

    func declareExchange(channel: UInt16, name: String, type: String, durable: Bool, arguments: [String: AMQPFieldValue]) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        _ = amqp_exchange_declare(state, channel, try scratchBytes(name), try scratchBytes(type), 0,
                                  durable ? 1 : 0, 0, 0, try encode(table: arguments))
        try check(amqp_get_rpc_reply(state), channel: channel, "exchange.declare '\(name)'")
    }

    /// Declares (or with `passive`, only checks) a queue and returns its ready messages and consumers.
    @discardableResult
    func declareQueue(
        channel: UInt16, name: String, passive: Bool, durable: Bool, arguments: [String: AMQPFieldValue]
    ) throws(AMQPError) -> (messages: Int, consumers: Int) {
        try flushFrames()
        defer { recycleScratch() }
        let ok = amqp_queue_declare(state, channel, try scratchBytes(name), passive ? 1 : 0, durable ? 1 : 0, 0, 0,
                                    try encode(table: arguments))
        try check(amqp_get_rpc_reply(state), channel: channel, "queue.declare '\(name)'")
        return (Int(ok?.pointee.message_count ?? 0), Int(ok?.pointee.consumer_count ?? 0))
    }

    func bind(channel: UInt16, queue: String, exchange: String, routingKey: String) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        _ = amqp_queue_bind(state, channel, try scratchBytes(queue), try scratchBytes(exchange),
                            try scratchBytes(routingKey), amqp_table_t(num_entries: 0, entries: nil))
        try check(amqp_get_rpc_reply(state), channel: channel, "queue.bind '\(queue)' to '\(exchange)'")
    }

    func purge(channel: UInt16, queue: String) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        _ = amqp_queue_purge(state, channel, try scratchBytes(queue))
        try check(amqp_get_rpc_reply(state), channel: channel, "queue.purge '\(queue)'")
    }

    func deleteQueue(channel: UInt16, queue: String) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        _ = amqp_queue_delete(state, channel, try scratchBytes(queue), 0, 0)
        try check(amqp_get_rpc_reply(state), channel: channel, "queue.delete '\(queue)'")
    }

    func deleteExchange(channel: UInt16, exchange: String) throws(AMQPError) {
        try flushFrames()
        defer { recycleScratch() }
        _ = amqp_exchange_delete(state, channel, try scratchBytes(exchange), 0)
        try check(amqp_get_rpc_reply(state), channel: channel, "exchange.delete '\(exchange)'")
    }

    /// basic.get; nil when the queue is empty. With `autoAck` false the broker keeps the message
    /// until it is acked on this channel, or puts it back in place when the channel closes.
    func get(channel: UInt16, queue: String, generation: UInt64, autoAck: Bool = true) throws(AMQPError) -> AMQPDelivery? {
        try flushFrames()
        let queueBytes: amqp_bytes_t
        do {
            queueBytes = try scratchBytes(queue)
        } catch {
            recycleScratch()
            throw error
        }
        let reply = amqp_basic_get(state, channel, queueBytes, autoAck ? 1 : 0)
        recycleScratch()
        try check(reply, channel: channel, "basic.get '\(queue)'")
        guard reply.reply.id == AMQP_BASIC_GET_OK_METHOD, let decoded = reply.reply.decoded else { return nil }
        // Copy before reading the content: the decoded method lives in the library's frame pool.
        let getOk = decoded.assumingMemoryBound(to: amqp_basic_get_ok_t.self).pointee
        let tag = getOk.delivery_tag
        let redelivered = getOk.redelivered != 0
        let exchange = Self.string(getOk.exchange)
        let routingKey = Self.string(getOk.routing_key)
        let content = try readContent(channel: channel, bodyLimit: .max)
        return AMQPDelivery(
            tag: AMQPDeliveryTag(connectionGeneration: generation, value: tag), body: content.body, properties: content.properties,
            exchange: exchange, routingKey: routingKey, redelivered: redelivered)
    }

    /// channel.close from our side, waited for: the broker gives back every message this channel
    /// took with basic.get and did not ack, each to its place in its queue.
    func closeChannel(_ channel: UInt16) throws(AMQPError) {
        try flushFrames()
        _ = amqp_channel_close(state, channel, AMQP_REPLY_SUCCESS)
        // Closed either way: a server exception here is the broker closing it first.
        openChannels.remove(channel)
        try check(amqp_get_rpc_reply(state), channel: channel, "channel.close \(channel)")
    }
}
