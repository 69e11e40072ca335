import PushCore
/// Executing queued commands on the live connection (owner thread only).
extension ConnectionLoop {
    func perform(_ commands: [ClientCommand], on connection: AMQPConnection) throws(AMQPError) {
        for command in commands {
            switch command {
            case .ack(let tag, false) where tag.connectionGeneration == generation:
                // Single acks wait in `pendingAcks` to go out together as few `multiple` acks.
                if pendingAcks.isEmpty { pendingAcksSince = .now }
                pendingAcks.append(tag.value)
                if tag.value == unacked.oldest { pendingAcksIncludeOldest = true }
            case .publish(let request):
                try publish(request, on: connection)
            // The rest may settle the same tags (a multiple nack): pending acks go out first.
            case .ack(let tag, let multiple):
                try flushAcks(on: connection)
                try settle(tag, on: connection, multiple: multiple, requeue: nil)
            case .nack(let tag, let requeue, let multiple):
                try flushAcks(on: connection)
                try settle(tag, on: connection, multiple: multiple, requeue: requeue)
            case .consume(let queue, let prefetch, let maxBodyBytes, let handler):
                try flushAcks(on: connection)
                try connection.flushFrames()
                let tag = addConsumer(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, handler: handler)
                do {
                    try startConsumer(tag, on: connection)
                } catch {
                    // Most likely the queue does not exist (404 closes the consume channel):
                    // retrying on every reconnect would only loop, so this consumer stops here and
                    // the application hears of it (a silent stop would look like an empty queue).
                    consumers[tag]?.active = false
                    logger.error("AMQP consume failed", metadata: [LogKeys.queue: "\(queue)", LogKeys.error: "\(error)"])
                    client.onEvent(.consumeFailed(queue: queue, reason: "\(error)"))
                    throw error
                }
                client.onEvent(.consumerStarted(queue: queue))
            case .stopConsuming:
                try flushAcks(on: connection)
                try connection.flushFrames()
                for tag in consumers.tags where consumers[tag]?.active == true {
                    consumers[tag]?.active = false
                    try connection.cancel(channel: Self.consumeChannel, consumerTag: tag)
                }
            case .admin(let request, let completion):
                try flushAcks(on: connection)
                try connection.flushFrames()
                let result = admin(request, on: connection)
                completion(result)
                if connection.isBroken, case .failure(let error) = result { throw error }
            }
        }
        if let flush = acksDue() { try flushAcks(on: connection, holdingGaps: flush == .oldestRun) }
        // Acks and publishes go out in one write once the loop has read what came in (`iterate`).
    }

    enum AckFlush { case oldestRun, all }

    /// Acks go out together, as few `multiple` acks as possible: one frame per batch instead of
    /// one per job (the broker's cost per message dominated workloads of one-device jobs).
    /// - `oldestRun`: once `ackDelay` passed or `ackBatch` are pending, if they include the oldest
    ///   unacked delivery: the run from it goes as one `multiple`; acks after a gap wait for it.
    ///   RabbitMQ finds a single ack's tag by walking the channel's unacked deliveries from the
    ///   oldest (`rabbit_channel:collect_acks`), so singles sent past thousands of deliveries
    ///   still in flight cost it more than the jobs did: 78–110 µs of broker CPU per one-token
    ///   job with 8,000 unacked, 58–62 µs with 500–2,000 (`ops/bench --workloads a`).
    /// - `all`, singles included: once they waited `ackHoldLimit`, or half the prefetch window
    ///   waits on them, so a slow job never holds the acks of later ones for long and the broker
    ///   never runs out of window because of the wait.
    func acksDue(now: ContinuousClock.Instant = .now) -> AckFlush? {
        guard let since = pendingAcksSince, !pendingAcks.isEmpty else { return nil }
        if pendingAcks.count * 2 >= smallestPrefetch || now - since >= Self.ackHoldLimit { return .all }
        guard pendingAcksIncludeOldest, pendingAcks.count >= Self.ackBatch || now - since >= Self.ackDelay else { return nil }
        return .oldestRun
    }

    /// Milliseconds until the pending acks are due (nil when none are pending).
    func millisecondsUntilAcksDue() -> Int32? {
        guard let since = pendingAcksSince, !pendingAcks.isEmpty else { return nil }
        let remaining = (pendingAcksIncludeOldest ? Self.ackDelay : Self.ackHoldLimit) - (ContinuousClock.now - since)
        return max(0, Int32(Backoff.seconds(remaining) * 1000 + 0.999))
    }

    /// Sends the pending acks; with `holdingGaps`, those after a gap stay pending (see `acksDue`).
    func flushAcks(on connection: AMQPConnection, holdingGaps: Bool = false) throws(AMQPError) {
        guard !pendingAcks.isEmpty else {
            pendingAcksSince = nil
            pendingAcksIncludeOldest = false
            return
        }
        let (plan, held, dropped) = unacked.planAcks(pendingAcks, holdingGaps: holdingGaps)
        if dropped > 0 {
            logger.debug("AMQP dropped acks for unknown or already settled delivery tags")
        }
        pendingAcks.removeAll(keepingCapacity: true)
        pendingAcks.append(contentsOf: held)
        // Held acks keep their age: `ackHoldLimit` counts from the first of them.
        if held.isEmpty { pendingAcksSince = nil }
        pendingAcksIncludeOldest = held.first != nil && held.first == unacked.oldest
        for (tag, multiple) in plan {
            try connection.ack(channel: Self.consumeChannel, deliveryTag: tag, multiple: multiple)
        }
    }

    /// Ack (`requeue == nil`) or nack, never for a tag the channel does not know: an old-generation
    /// or double-settled tag would be a 406 channel error that requeues everything in flight.
    private func settle(_ tag: AMQPDeliveryTag, on connection: AMQPConnection, multiple: Bool, requeue: Bool?) throws(AMQPError) {
        guard tag.connectionGeneration == generation else {
            logger.debug("AMQP ack/nack for an earlier connection dropped; the broker already requeued it",
                         metadata: [LogKeys.tag: "\(tag)", LogKeys.generation: "\(generation)"])
            return
        }
        let wireTag: UInt64
        if multiple {
            guard let largest = unacked.removeThrough(tag.value) else {
                logger.debug("AMQP multiple ack/nack covers no outstanding delivery", metadata: [LogKeys.tag: "\(tag)"])
                return
            }
            wireTag = largest
        } else {
            guard unacked.contains(tag.value) else {
                logger.debug("AMQP ack/nack for an unknown or already settled delivery dropped", metadata: [LogKeys.tag: "\(tag)"])
                return
            }
            unacked.remove(tag.value)
            wireTag = tag.value
        }
        if let requeue {
            try connection.nack(channel: Self.consumeChannel, deliveryTag: wireTag, multiple: multiple, requeue: requeue)
        } else {
            try connection.ack(channel: Self.consumeChannel, deliveryTag: wireTag, multiple: multiple)
        }
    }

    /// Writes the publish and records it for its confirm; never waits for the confirm itself.
    func publish(_ request: PublishRequest, on connection: AMQPConnection) throws(AMQPError) {
        if blocked {
            heldPublishes.append(request)
            return
        }
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
        let returnKey = request.mandatory
            ? PublishConfirms.ReturnKey(exchange: request.exchange, routingKey: request.routingKey,
                                        bodyCount: request.body.count, properties: request.properties)
            : nil
        confirms.record(completion: request.completion, returnKey: returnKey)
        if confirmsWaitingSince == nil { confirmsWaitingSince = .now }
    }

    @discardableResult
    func addConsumer(queue: String, prefetch: UInt16, maxBodyBytes: Int, handler: @escaping @Sendable (AMQPDelivery) -> Void) -> String {
        // A stopped consumer of the same queue gives its tag back (its basic.cancel was answered
        // before this runs): pausing and resuming must not grow the table, one entry per pause.
        if let tag = consumers.tags.first(where: { consumers[$0]?.active == false && consumers[$0]?.queue == queue }) {
            consumers[tag] = Consumer(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, handler: handler, active: true)
            return tag
        }
        // Our own tags, stable across reconnects, so a delivery always finds its handler.
        let tag = "pushworker.\(consumers.count + 1)"
        consumers[tag] = Consumer(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, handler: handler, active: true)
        return tag
    }

    func startConsumer(_ tag: String, on connection: AMQPConnection) throws(AMQPError) {
        guard let consumer = consumers[tag] else { return }
        try connection.qos(channel: Self.consumeChannel, prefetch: consumer.prefetch)
        try connection.consume(channel: Self.consumeChannel, queue: consumer.queue, consumerTag: tag)
        logger.debug("AMQP consuming", metadata: [LogKeys.queue: "\(consumer.queue)", LogKeys.prefetch: "\(consumer.prefetch)"])
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
                try connection.declareQueue(channel: Self.adminChannel, name: name, passive: false, durable: durable, arguments: arguments)
            case .binding(let queue, let exchange, let routingKey):
                try connection.bind(channel: Self.adminChannel, queue: queue, exchange: exchange, routingKey: routingKey)
            }
        }
    }

    func ensureAdminChannel(_ connection: AMQPConnection) throws(AMQPError) {
        // A failed admin RPC closes only this channel; reopen it on demand.
        if !connection.openChannels.contains(Self.adminChannel) {
            try connection.openChannel(Self.adminChannel)
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
                    channel: Self.adminChannel, name: queue, passive: true, durable: false, arguments: [:])))
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
            }
        } catch {
            return .failure(error)
        }
    }
}
