/// Frames from the broker, as events (connected phase only: there are no frames without a connection).
extension ConnectionMachine {
    /// basic.deliver: to the consumer that runs under `wireTag`, or whose earlier consume it was.
    mutating func delivered(channel: UInt16, wireTag: String, deliveryTag: UInt64) -> Action {
        guard channel == ConnectionChannels.consume, case .connected(let generation) = phase,
              let index = consumers.deliveryConsumerIndex(wireTag: wireTag)
        else { return .requeueUnknownDelivery(channel: channel, deliveryTag: deliveryTag, wireTag: wireTag) }
        live.policy.delivered(deliveryTag, consumer: index)
        return .deliver(consumer: index, tag: AMQPDeliveryTag(connectionGeneration: generation, value: deliveryTag))
    }

    /// basic.ack or basic.nack for our publishes.
    mutating func confirmed(channel: UInt16, deliveryTag: UInt64, multiple: Bool, nacked: Bool, now: Instant) -> Action? {
        guard channel == ConnectionChannels.publish, case .connected = phase else { return nil }
        let settled = live.policy.confirmed(deliveryTag, multiple: multiple, nacked: nacked, now: now)
        return settled.isEmpty ? nil : .complete(settled)
    }

    /// basic.return: false when it matches no outstanding mandatory publish.
    mutating func returned(channel: UInt16, _ key: PublishConfirms<Publish>.ReturnKey, replyCode: UInt16, replyText: String) -> Bool {
        guard channel == ConnectionChannels.publish, case .connected = phase else { return true }
        return live.policy.returned(key, replyCode: replyCode, replyText: replyText)
    }

    /// The broker cancelled a consumer (its queue was deleted, or it failed over): not restarted
    /// until the application consumes again. A cancel of an earlier consume of ours is stale.
    mutating func cancelledByBroker(wireTag: String) -> [Action] {
        guard let tag = consumers.tag(forWireTag: wireTag), let consumer = consumers[tag] else { return [] }
        consumers.cancelledByBroker(tag)
        return [.report(.consumerCancelledByServer(queue: consumer.queue))]
    }

    /// basic.consume-ok: running, or a stop or retune came meanwhile and the cancel goes now.
    mutating func consumeOk(channel: UInt16, wireTag: String) -> [Action] {
        guard channel == ConnectionChannels.consume, let tag = consumers.tag(forWireTag: wireTag),
              let consumer = consumers[tag] else { return [] }
        var actions: [Action]
        switch consumers.started(tag) {
        case .none: return []
        case .running: actions = [.report(.consumerStarted(queue: consumer.queue))]
        case .cancelNow: actions = [.cancelConsumer(wireTag: wireTag)]
        }
        return actions + heldAdminReleased()
    }

    /// basic.cancel-ok: the consumer starts again if it is wanted (a retune). One for an earlier
    /// consume (the broker had cancelled it, and it was started again meanwhile) changes nothing.
    mutating func cancelOk(channel: UInt16, wireTag: String) -> [Action] {
        guard channel == ConnectionChannels.consume, let tag = consumers.tag(forWireTag: wireTag) else { return [] }
        var actions: [Action] = []
        if consumers.cancelConfirmed(tag), let start = start(tag) { actions.append(start) }
        return actions + heldAdminReleased()
    }

    /// The broker closed a channel. The publish channel's publishes in flight are lost, and a
    /// fresh channel numbers from 1. The admin channel reopens on demand. The consume channel's
    /// delivery tags are void, so the connection starts over; a refused consume (most likely its
    /// queue does not exist) stops that consumer and the application hears of it: a silent stop
    /// would look like an empty queue, and a retry on every reconnect would only loop.
    mutating func channelClosed(channel: UInt16, error: AMQPError, causedByConsume: Bool) -> [Action] {
        switch channel {
        case ConnectionChannels.publish:
            guard case .connected = phase else { return [] }
            let failed = live.policy.publishChannelClosed(error)
            return (failed.isEmpty ? [] : [.complete(failed)]) + [.reopenPublishChannel]
        case ConnectionChannels.admin:
            return []
        default:
            var actions: [Action] = []
            if causedByConsume, let tag = consumers.consumeRefused(), let queue = consumers[tag]?.queue {
                actions.append(.report(.consumeFailed(queue: queue, reason: "\(error)")))
            }
            actions.append(.drop(error))
            return actions
        }
    }

    /// connection.blocked: publishes wait in the policy instead of blocking the thread in send().
    mutating func blocked(reason: String) -> [Action] {
        guard case .connected = phase else { return [] }
        live.policy.brokerBlocked()
        return [.report(.blocked(reason: reason))]
    }

    /// connection.unblocked: the held publishes are written, in their order.
    mutating func unblocked(now: Instant) -> [Action] {
        guard case .connected = phase else { return [] }
        let held = live.policy.brokerUnblocked(now: now)
        return [.report(.unblocked)] + held.map { .write($0) }
    }

    /// The admin requests held while a consumer change was in flight, once none is.
    private mutating func heldAdminReleased() -> [Action] {
        guard !consumers.changeInFlight, case .connected = phase, !live.heldAdmin.isEmpty else { return [] }
        let held = live.heldAdmin
        live.heldAdmin = []
        return held.flatMap { admin($0) }
    }
}
