/// Consuming is idempotent per queue: one tag per queue for the connection's life, whatever order
/// starts, restarts and stops arrive in. A second consume of a queue already consumed with the same
/// prefetch changes nothing at the broker; with another prefetch it restarts the one consumer. So
/// a retune racing a pause, or a redeclare scheduled after a server cancel, can never leave two
/// consumers (and twice the prefetch) on one queue.
extension ConsumerTable {
    enum ConsumeStep: Equatable {
        /// Already consuming the queue with this prefetch: nothing goes to the broker.
        case unchanged(tag: String)
        /// basic.qos and basic.consume with this tag.
        case start(tag: String)
        /// basic.cancel, then basic.qos and basic.consume again with the same tag (RabbitMQ applies a
        /// basic.qos to consumers started after it).
        case restart(tag: String)
    }

    mutating func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int, bodyRoom: (@Sendable () -> Int)? = nil,
                          handler: @escaping @Sendable (AMQPDelivery) -> Void) -> ConsumeStep {
        let consumer = ConnectionLoop.Consumer(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, bodyRoom: bodyRoom,
                                               handler: handler, active: true)
        guard let tag = tags.first(where: { self[$0]?.queue == queue }), let existing = self[tag] else {
            // Our own tags, stable across reconnects, so a delivery always finds its handler.
            let tag = "pushworker.\(count + 1)"
            self[tag] = consumer
            return .start(tag: tag)
        }
        self[tag] = consumer
        guard existing.active else { return .start(tag: tag) }
        return existing.prefetch == prefetch ? .unchanged(tag: tag) : .restart(tag: tag)
    }

    /// Marks every active consumer stopped; returns their tags, to cancel at the broker.
    mutating func stopAll() -> [String] {
        let active = tags.filter { self[$0]?.active == true }
        for tag in active { self[tag]?.active = false }
        return active
    }

    /// Of the active consumers (0, unlimited, counts as no limit).
    var smallestActivePrefetch: Int {
        var smallest = Int.max
        for consumer in values where consumer.active && consumer.prefetch > 0 {
            smallest = min(smallest, Int(consumer.prefetch))
        }
        return smallest
    }
}
