import PushCore
/// Executing queued commands on the live connection (owner thread only).
extension ConnectionLoop {
    /// Runs a batch. Every command completes exactly once: when one throws (the connection broke),
    /// the ones after it never ran, so they are answered as if disconnected (publishes and RPCs
    /// fail, consumer changes are kept for the next connection) before the error goes up.
    func perform(_ commands: [ClientCommand], on connection: AMQPConnection) throws(AMQPError) {
        try Self.each(commands, { command throws(AMQPError) in try perform(command, on: connection) },
                      answeringTheRest: { rest, error in handleWhileDisconnected(rest, reason: error) })
        try send(policy.dueAcks(now: .now), on: connection)
        // Acks and publishes go out in one write once the loop has read what came in (`iterate`).
    }

    private func perform(_ command: ClientCommand, on connection: AMQPConnection) throws(AMQPError) {
        switch command {
        case .ack(let tag, false) where tag.connectionGeneration == generation:
            // Single acks wait in the policy to go out together as few `multiple` acks.
            policy.ackRequested(tag.value, now: .now)
        case .publish(let request):
            try publish(request, on: connection)
        // The rest may settle the same tags (a multiple nack): pending acks go out first.
        case .ack(let tag, let multiple):
            try send(policy.allAcks(), on: connection)
            try settle(tag, on: connection, multiple: multiple, requeue: nil)
        case .nack(let tag, let requeue, let multiple):
            try send(policy.allAcks(), on: connection)
            try settle(tag, on: connection, multiple: multiple, requeue: requeue)
        case .consume(let queue, let prefetch, let maxBodyBytes, let bodyRoom, let handler):
            try consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, bodyRoom: bodyRoom, handler: handler, on: connection)
        case .stopConsuming:
            try send(policy.allAcks(), on: connection)
            try connection.flushFrames()
            let tags = consumers.stopAll()
            policy.smallestPrefetch = consumers.smallestActivePrefetch
            for tag in tags {
                try sendCancel(tag, on: connection)
            }
        case .admin where consumers.changeInFlight:
            // Answered after the consume-ok or cancel-ok, so an admin request sees every consumer
            // change made before it (a consumer count after a stop counts 0), and no blocking RPC
            // reads ahead of deliveries still in flight (`ConsumerTable+Consume`).
            adminAfterCancel.append(command)
        case .admin(let request, let completion):
            try send(policy.allAcks(), on: connection)
            try connection.flushFrames()
            let result = admin(request, on: connection)
            completion(result)
            if connection.isBroken, case .failure(let error) = result { throw error }
        }
    }

    /// Writes ack frames the policy planned.
    func send(_ acks: [ConnectionPolicy.AckFrame], on connection: AMQPConnection) throws(AMQPError) {
        for (tag, multiple) in acks {
            try connection.ack(channel: Self.consumeChannel, deliveryTag: tag, multiple: multiple)
        }
    }

    /// Ack (`requeue == nil`) or nack, never for a tag the channel does not know.
    private func settle(_ tag: AMQPDeliveryTag, on connection: AMQPConnection, multiple: Bool, requeue: Bool?) throws(AMQPError) {
        guard tag.connectionGeneration == generation else {
            logger.debug("AMQP ack/nack for an earlier connection dropped; the broker already requeued it",
                         metadata: [LogKeys.tag: "\(tag)", LogKeys.generation: "\(generation)"])
            return
        }
        guard let (wireTag, multiple) = policy.settle(tag.value, multiple: multiple) else {
            logger.debug("AMQP ack/nack for an unknown or already settled delivery dropped", metadata: [LogKeys.tag: "\(tag)"])
            return
        }
        if let requeue {
            try connection.nack(channel: Self.consumeChannel, deliveryTag: wireTag, multiple: multiple, requeue: requeue)
        } else {
            try connection.ack(channel: Self.consumeChannel, deliveryTag: wireTag, multiple: multiple)
        }
    }

    /// Writes the publish and records it for its confirm; never waits for the confirm itself.
    func publish(_ request: PublishRequest, on connection: AMQPConnection) throws(AMQPError) {
        guard policy.admit(request) else { return }
        do {
            try connection.publish(
                channel: Self.publishChannel, exchange: request.exchange, routingKey: request.routingKey,
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
        policy.written(request, now: .now)
    }

    /// Publishes in order; when one throws, the rest fail with it (each completes exactly once).
    func publish(_ requests: [PublishRequest], on connection: AMQPConnection) throws(AMQPError) {
        try Self.each(requests, { request throws(AMQPError) in try publish(request, on: connection) },
                      answeringTheRest: { rest, error in for request in rest { request.completion(.failure(error)) } })
    }

    /// Runs `body` on each item in order; when one throws, the items after it never ran and go to
    /// `answeringTheRest` with the error (so each is answered exactly once), then the error goes up.
    private static func each<Item>(_ items: [Item], _ body: (Item) throws(AMQPError) -> Void,
                                   answeringTheRest: (ArraySlice<Item>, AMQPError) -> Void) throws(AMQPError) {
        var index = items.startIndex
        do {
            while index < items.endIndex {
                try body(items[index])
                index += 1
            }
        } catch {
            answeringTheRest(items[(index + 1)...], error)
            throw error
        }
    }

    private func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int, bodyRoom: (@Sendable () -> Int)?,
                         handler: @escaping @Sendable (AMQPDelivery) -> Void, on connection: AMQPConnection) throws(AMQPError) {
        let step = consumers.consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, bodyRoom: bodyRoom, handler: handler)
        policy.smallestPrefetch = consumers.smallestActivePrefetch
        switch step {
        case .unchanged:
            client.onEvent(.consumerStarted(queue: queue))
        case .start(let tag):
            try send(policy.allAcks(), on: connection)
            try start(tag, on: connection)
        case .cancelThenStart(let tag):
            try send(policy.allAcks(), on: connection)
            try sendCancel(tag, on: connection)
        case .startAfterCancel, .awaitingConsumeOk:
            break
        }
    }

    /// Starts a consumer; its consume-ok tells the application (`ConnectionLoop+Frames`). A
    /// refused consume (most likely the queue does not exist: a 404 closes the consume channel) is
    /// reported there too, and not retried on every reconnect, which would only loop.
    func start(_ tag: String, on connection: AMQPConnection) throws(AMQPError) {
        try startConsumer(tag, on: connection)
    }

    /// basic.qos and basic.consume, not waited for: the deliveries of the connection's other
    /// consumers keep passing the body limit meanwhile (`AMQPConnection.sendConsume`).
    func startConsumer(_ tag: String, on connection: AMQPConnection) throws(AMQPError) {
        guard let consumer = consumers[tag], let wireTag = consumers.starting(tag) else { return }
        try connection.sendConsume(channel: Self.consumeChannel, queue: consumer.queue, consumerTag: wireTag, prefetch: consumer.prefetch)
        policy.smallestPrefetch = consumers.smallestActivePrefetch
    }

    /// basic.cancel for the consumer `tag` under the tag the broker knows it by.
    func sendCancel(_ tag: String, on connection: AMQPConnection) throws(AMQPError) {
        guard let wireTag = consumers[tag]?.wireTag else { return }
        try connection.sendCancel(channel: Self.consumeChannel, consumerTag: wireTag)
    }

    func declare(_ declarations: [AMQPDeclaration], on connection: AMQPConnection) throws(AMQPError) {
        try ensureAdminChannel(connection)
        for declaration in declarations {
            switch declaration {
            case .exchange(let name, let type, let durable, let arguments):
                do {
                    try connection.declareExchange(channel: Self.adminChannel, name: name, type: type, durable: durable, arguments: arguments)
                } catch where error.status == 406 && !arguments.isEmpty && !connection.isBroken {
                    // PRECONDITION_FAILED: it exists with other arguments (declared by an older
                    // version or by hand). Keep it; say what it lacks.
                    logger.warning("AMQP exchange exists with other arguments; kept as it is", metadata: [
                        LogKeys.exchange: "\(name)", LogKeys.arguments: "\(arguments.keys.sorted())", LogKeys.error: "\(error)",
                    ])
                    try ensureAdminChannel(connection)
                }
            case .queue(let name, let durable, let arguments):
                do {
                    try connection.declareQueue(channel: Self.adminChannel, name: name, passive: false, durable: durable, arguments: arguments)
                } catch where error.status == 406 {
                    throw AMQPError(code: error.code, status: error.status, message: error.message
                        + " (queue \(name) exists with another type or other arguments: every declarer must declare it the same way, e.g. the same --queue-type, or delete it)")
                }
            case .existingQueue(let name):
                _ = try connection.declareQueue(channel: Self.adminChannel, name: name, passive: true, durable: false, arguments: [:])
            case .binding(let queue, let exchange, let routingKey):
                try connection.bind(channel: Self.adminChannel, queue: queue, exchange: exchange, routingKey: routingKey)
            }
        }
    }

    func ensureAdminChannel(_ connection: AMQPConnection) throws(AMQPError) {
        // A failed admin RPC closes only this channel; reopen it on demand.
        if !connection.openChannels.contains(Self.adminChannel) {
            try connection.openChannel(Self.adminChannel)
            adminChannelOpenings += 1
        }
    }

    private func admin(_ request: AdminRequest, on connection: AMQPConnection) -> Result<AdminResult, AMQPError> {
        do {
            switch request {
            case .declare(let declarations):
                try declare(declarations, on: connection)
                for declaration in declarations where !topology.contains(declaration) {
                    topology.append(declaration)
                }
                return .success(.done)
            case .get(let queue):
                try ensureAdminChannel(connection)
                return .success(.delivery(try connection.get(channel: Self.adminChannel, queue: queue, generation: generation)))
            case .messageCount(let queue):
                try ensureAdminChannel(connection)
                return .success(.count(try connection.declareQueue(
                    channel: Self.adminChannel, name: queue, passive: true, durable: false, arguments: [:]).messages))
            case .consumerCount(let queue):
                try ensureAdminChannel(connection)
                return .success(.count(try connection.declareQueue(
                    channel: Self.adminChannel, name: queue, passive: true, durable: false, arguments: [:]).consumers))
            case .purge(let queue):
                try ensureAdminChannel(connection)
                try connection.purge(channel: Self.adminChannel, queue: queue)
                return .success(.done)
            case .deleteQueue(let queue):
                try ensureAdminChannel(connection)
                try connection.deleteQueue(channel: Self.adminChannel, queue: queue)
                return .success(.done)
            case .deleteExchange(let exchange):
                try ensureAdminChannel(connection)
                try connection.deleteExchange(channel: Self.adminChannel, exchange: exchange)
                return .success(.done)
            case .held(let request):
                return .success(try held(request, on: connection))
            case .renewPublishChannel:
                logger.warning("AMQP publish channel renewed after repeated nacks")
                complete(policy.publishChannelClosed(AMQPError(code: .connectionLost, message: "the publish channel was renewed before the broker confirmed")))
                try connection.closeChannel(Self.publishChannel)
                try connection.openChannel(Self.publishChannel)
                try connection.confirmSelect(Self.publishChannel)
                return .success(.done)
            }
        } catch {
            return .failure(error)
        }
    }
}
