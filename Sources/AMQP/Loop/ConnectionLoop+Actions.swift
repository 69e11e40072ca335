/// Performing the machine's actions: the loop's I/O (owner thread only).
extension ConnectionLoop {
    typealias Action = Machine.Action

    /// Performs the actions in order. When one throws (the connection broke), the ones after it
    /// are performed without the connection (`performWithoutConnection`), so every publish and
    /// request is answered exactly once, then the error goes up.
    func perform(_ actions: [Action], on connection: AMQPConnection) throws(AMQPError) {
        var next = 0
        do {
            while next < actions.count {
                next += 1
                try perform(actions[next - 1], on: connection)
            }
        } catch {
            for action in actions[next...] { performWithoutConnection(action, failingWith: error) }
            throw error
        }
    }

    func perform(_ action: Action, on connection: AMQPConnection) throws(AMQPError) {
        switch action {
        case .flush:
            try connection.flushFrames()
        case .sendAcks(let acks):
            for (tag, multiple) in acks {
                try connection.ack(channel: ConnectionChannels.consume, deliveryTag: tag, multiple: multiple)
            }
        case .ack(let frame):
            try connection.ack(channel: ConnectionChannels.consume, deliveryTag: frame.tag, multiple: frame.multiple)
        case .nack(let frame, let requeue):
            try connection.nack(channel: ConnectionChannels.consume, deliveryTag: frame.tag, multiple: frame.multiple, requeue: requeue)
        case .requeueUnknownDelivery(let channel, let deliveryTag, let wireTag):
            logger.warning("AMQP delivery for an unknown consumer requeued", metadata: [LogKeys.consumer: "\(wireTag)"])
            try connection.nack(channel: channel, deliveryTag: deliveryTag, multiple: false, requeue: true)
        case .startConsumer(let queue, let wireTag, let prefetch):
            // Not waited for: the deliveries of the connection's other consumers keep passing the
            // body limit meanwhile (`AMQPConnection.sendConsume`).
            try connection.sendConsume(channel: ConnectionChannels.consume, queue: queue, consumerTag: wireTag, prefetch: prefetch)
        case .cancelConsumer(let wireTag):
            try connection.sendCancel(channel: ConnectionChannels.consume, consumerTag: wireTag)
        case .write(let request):
            try write(request, on: connection)
        case .reopenPublishChannel:
            if connection.openChannels.contains(ConnectionChannels.publish) {
                try connection.closeChannel(ConnectionChannels.publish)
            }
            try connection.openChannel(ConnectionChannels.publish)
            try connection.confirmSelect(ConnectionChannels.publish)
        case .runAdmin(let command):
            let result = admin(command.request, on: connection)
            command.completion(result)
            if connection.isBroken, case .failure(let error) = result { throw error }
        case .drop(let error):
            throw error
        case .connect, .reportConnected, .reportConnectFailed, .reportDisconnected, .ignoreSettle, .deliver, .report,
             .complete, .completeOverdue, .failAdmin:
            performWithoutConnection(action, failingWith: nil)
        }
    }

    /// Writes the publish and hands it to the machine to wait for its confirm; never waits for the
    /// confirm itself.
    private func write(_ request: PublishRequest, on connection: AMQPConnection) throws(AMQPError) {
        do {
            try connection.publish(
                channel: ConnectionChannels.publish, exchange: request.exchange, routingKey: request.routingKey,
                body: request.body, properties: request.properties, mandatory: request.mandatory)
        } catch {
            if connection.isBroken {
                request.completion(.failure(error))
                throw error
            }
            // Could not be encoded; nothing was written.
            request.completion(.failure(AMQPError(code: .unencodable, status: error.status, message: error.message)))
            return
        }
        let returnKey = request.mandatory
            ? PublishConfirms<PublishRequest>.ReturnKey(exchange: request.exchange, routingKey: request.routingKey,
                                                        bodyCount: request.body.count, properties: request.properties)
            : nil
        machine.written(request, returnKey: returnKey, now: .now)
    }

    func performWithoutConnection(_ actions: [Action]) {
        for action in actions { performWithoutConnection(action, failingWith: nil) }
    }

    /// What an action means without a connection: callers are answered and events reported; a
    /// write that can no longer happen fails its publish or request with `error` (the broken
    /// connection's), and the broker's side (acks, consumes) went with the connection.
    func performWithoutConnection(_ action: Action, failingWith error: AMQPError?) {
        switch action {
        case .reportConnected(let generation):
            client.markConnected(generation: generation)
            logger.info("AMQP connected", metadata: [
                LogKeys.generation: "\(generation)", LogKeys.heartbeat: "\(connection?.heartbeat ?? 0)",
            ])
            client.onEvent(.connected(generation: generation))
        case .reportConnectFailed(let cause, let delay):
            client.markDisconnected(cause)
            logger.warning("AMQP connect failed", metadata: [LogKeys.error: "\(cause)"])
            logger.debug("AMQP reconnect scheduled", metadata: [LogKeys.reconnectIn: "\(delay)"])
        case .reportDisconnected(let cause, let delay):
            client.markDisconnected(cause)
            logger.warning("AMQP connection lost", metadata: [LogKeys.error: "\(cause)", LogKeys.reconnectIn: "\(delay)"])
            client.onEvent(.disconnected(reason: cause.description))
        case .report(let event):
            report(event)
        case .ignoreSettle(let tag, .earlierConnection):
            logger.debug("AMQP ack/nack for an earlier connection dropped; the broker already requeued it",
                         metadata: [LogKeys.tag: "\(tag)"])
        case .ignoreSettle(let tag, .unknownDelivery):
            logger.debug("AMQP ack/nack for an unknown or already settled delivery dropped", metadata: [LogKeys.tag: "\(tag)"])
        case .complete(let settled):
            for (request, result) in settled { request.completion(result) }
        case .completeOverdue(let settled):
            logger.warning("AMQP publishes not confirmed in time; failed for a retry", metadata: [LogKeys.count: "\(settled.count)"])
            for (request, result) in settled { request.completion(result) }
        case .failAdmin(let command, let failure):
            command.completion(.failure(failure))
        case .write(let request):
            request.completion(.failure(error ?? machine.notConnectedError))
        case .runAdmin(let command):
            command.completion(.failure(error ?? machine.notConnectedError))
        case .connect, .drop, .flush, .sendAcks, .ack, .nack, .requeueUnknownDelivery, .startConsumer, .cancelConsumer,
             .reopenPublishChannel, .deliver:
            break
        }
    }

    private func report(_ event: AMQPConnectionEvent) {
        switch event {
        case .consumerStarted(let queue):
            logger.debug("AMQP consuming", metadata: [LogKeys.queue: "\(queue)"])
        case .consumerCancelledByServer(let queue):
            logger.warning("AMQP consumer cancelled by broker", metadata: [LogKeys.queue: "\(queue)"])
        case .consumeFailed(let queue, let reason):
            logger.error("AMQP consume failed", metadata: [LogKeys.queue: "\(queue)", LogKeys.error: "\(reason)"])
        case .blocked(let reason):
            logger.warning("AMQP connection blocked by broker", metadata: [LogKeys.reason: "\(reason)"])
        case .unblocked:
            logger.info("AMQP connection unblocked")
        case .connected, .disconnected:
            break
        }
        client.onEvent(event)
    }
}
