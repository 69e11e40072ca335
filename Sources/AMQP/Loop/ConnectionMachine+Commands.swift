/// Commands from the callers (`ClientCommand`), as events.
extension ConnectionMachine {
    /// A single ack of the current connection waits to go out with others (`ConnectionPolicy.dueAcks`);
    /// any other ack, and every nack, goes out now, after the pending acks (they may cover the same
    /// tags). `requeue` nil: an ack.
    mutating func settle(_ tag: AMQPDeliveryTag, multiple: Bool, requeue: Bool?, now: @autoclosure () -> Instant) -> [Action] {
        // Without a live connection the broker requeued the delivery with its connection.
        guard let generation = liveGeneration, tag.connectionGeneration == generation else {
            return [.ignoreSettle(tag, .earlierConnection)]
        }
        if requeue == nil, !multiple {
            live.policy.ackRequested(tag.value, now: now())
            return []
        }
        var actions = pendingAcksFirst()
        guard let frame = live.policy.settle(tag.value, multiple: multiple) else {
            actions.append(.ignoreSettle(tag, .unknownDelivery))
            return actions
        }
        actions.append(requeue.map { .nack(frame, requeue: $0) } ?? .ack(frame))
        return actions
    }

    /// `.write` now, nothing while the broker blocks the connection (held until it unblocks), or
    /// `.complete` with a failure when there is no connection: waiting for a reconnect could take
    /// arbitrarily long.
    mutating func publish(_ publish: Publish) -> Action? {
        switch phase {
        case .connected:
            return live.policy.admit(publish) ? .write(publish) : nil
        case .closing:
            return .complete([(publish, .failure(AMQPError(code: .shutdown, message: "client was shut down")))])
        case .disconnected, .connecting:
            return .complete([(publish, .failure(notConnectedError))])
        }
    }

    /// The publish was written: it waits for its confirm.
    mutating func written(_ publish: Publish, returnKey: PublishConfirms<Publish>.ReturnKey?, now: @autoclosure () -> Instant) {
        assert(liveGeneration != nil, "written() without a live connection")
        live.policy.written(publish, returnKey: returnKey, now: now())
    }

    /// A batch of commands was taken: acks that became due go out with it.
    mutating func commandsTaken(now: @autoclosure () -> Instant) -> Action? {
        guard case .connected = phase else { return nil }
        let acks = live.policy.dueAcks(now: now(), prefetches: consumers.activePrefetches)
        return acks.isEmpty ? nil : .sendAcks(acks)
    }

    /// Consuming is idempotent per queue (`ConsumerTable.consume`). Returns the consumer's index,
    /// where the loop keeps its handler. Without a connection the consumer is remembered and starts
    /// on the next one.
    mutating func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int) -> (consumer: Int, actions: [Action]) {
        let step = consumers.consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes)
        let tag: String
        var actions: [Action] = []
        switch step {
        case .unchanged(let unchanged):
            tag = unchanged
            if isConnected { actions.append(.report(.consumerStarted(queue: queue))) }
        case .start(let toStart):
            tag = toStart
            if isConnected {
                actions += pendingAcksFirst()
                if let start = start(tag) { actions.append(start) }
            }
        case .cancelThenStart(let toCancel):
            tag = toCancel
            if isConnected {
                actions += pendingAcksFirst()
                if let cancel = cancel(tag) { actions.append(cancel) }
            }
        case .startAfterCancel(let waiting), .awaitingConsumeOk(let waiting):
            tag = waiting
        }
        guard let index = consumers.index(of: tag) else { preconditionFailure("the table knows the tag it just gave") }
        return (index, actions)
    }

    /// Every consumer stops (a pause): cancels go out after the pending acks.
    mutating func stopConsuming() -> [Action] {
        let tags = consumers.stopAll()
        guard isConnected else { return [] }
        var actions = pendingAcksFirst()
        actions.append(.flush)
        actions += tags.compactMap { cancel($0) }
        return actions
    }

    /// Runs after the pending acks, unless a consume or cancel is in flight: then it waits for
    /// the answer, so it sees every consumer change asked before it (a consumer count after a stop
    /// counts 0), and no blocking RPC reads ahead of deliveries still in flight.
    mutating func admin(_ admin: Admin) -> [Action] {
        switch phase {
        case .connected:
            guard !consumers.changeInFlight else {
                live.heldAdmin.append(admin)
                return []
            }
            var actions = pendingAcksFirst()
            actions += [.flush, .runAdmin(admin)]
            return actions
        case .closing:
            return [.failAdmin(admin, AMQPError(code: .shutdown, message: "client was shut down"))]
        case .disconnected, .connecting:
            return [.failAdmin(admin, notConnectedError)]
        }
    }

    /// The admin channel's publish-channel renewal: what was in flight on the old channel fails.
    mutating func publishChannelRenewed() -> [Action] {
        guard case .connected = phase else { return [] }
        let failed = live.policy.publishChannelClosed(AMQPError(
            code: .connectionLost, message: "the publish channel was renewed before the broker confirmed"))
        return (failed.isEmpty ? [] : [.complete(failed)]) + [.reopenPublishChannel]
    }

    /// Every pending ack, as the first action of something that must not overtake them.
    mutating func pendingAcksFirst() -> [Action] {
        guard liveGeneration != nil else { return [] }
        let acks = live.policy.allAcks()
        return acks.isEmpty ? [] : [.sendAcks(acks)]
    }
}
