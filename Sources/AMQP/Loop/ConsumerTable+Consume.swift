/// Consuming is idempotent per queue: one tag per queue for the connection's life, whatever order
/// starts, restarts and stops arrive in. A second consume of a queue already consumed with the same
/// prefetch changes nothing at the broker; with another prefetch it restarts the one consumer. So
/// a retune racing a pause, or a redeclare scheduled after a server cancel, can never leave two
/// consumers (and twice the prefetch) on one queue.
///
/// basic.consume and basic.cancel are never waited for in place: until the answer the broker
/// keeps sending the connection's other deliveries (and, for a cancel, this consumer's) as the
/// prefetch allows, and a blocking RPC would hold all of it whole in rabbitmq-c's memory (measured:
/// docs/evidence/code-measurements.md#consumer-starts-and-cancels). So the method is sent, the
/// consumer is `starting` or `cancelling`, deliveries keep passing the body limit, and what was
/// asked meanwhile happens when the answer arrives. A cancel of a consume not yet answered waits
/// for its consume-ok: RabbitMQ 3.10's channel crashes on it (`badkey` in `consumer_monitor`) and
/// closes the connection with 541.
extension ConsumerTable {
    enum ConsumeStep: Equatable {
        /// Already consuming the queue with this prefetch: nothing goes to the broker.
        case unchanged(tag: String)
        /// basic.qos and basic.consume with this tag.
        case start(tag: String)
        /// Send basic.cancel; basic.qos and basic.consume follow its cancel-ok (RabbitMQ applies a
        /// basic.qos to consumers started after it).
        case cancelThenStart(tag: String)
        /// A cancel is in flight; the consumer starts with the newest prefetch on its cancel-ok.
        case startAfterCancel(tag: String)
        /// A start with this prefetch is in flight; its consume-ok tells the application.
        case awaitingConsumeOk(tag: String)
    }

    mutating func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int) -> ConsumeStep {
        var consumer = Consumer(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, wanted: true)
        guard let tag = tags.first(where: { self[$0]?.queue == queue }), let existing = self[tag] else {
            // Our own tags, stable across reconnects, so a delivery always finds its handler.
            let tag = "pushworker.\(count + 1)"
            self[tag] = consumer
            return .start(tag: tag)
        }
        consumer.atBroker = existing.atBroker
        consumer.wireTag = existing.wireTag
        switch existing.atBroker {
        case .none:
            self[tag] = consumer
            return .start(tag: tag)
        case .cancelling:
            self[tag] = consumer
            return .startAfterCancel(tag: tag)
        case .consuming(let running) where running == prefetch:
            self[tag] = consumer
            return .unchanged(tag: tag)
        case .starting(let running, _) where running == prefetch:
            // A stop meanwhile is undone: the consume in flight is the one wanted.
            consumer.atBroker = .starting(prefetch: running, thenCancel: false)
            self[tag] = consumer
            return .awaitingConsumeOk(tag: tag)
        case .starting(let running, _):
            // The cancel waits for the consume-ok; the start after it, for the cancel-ok.
            consumer.atBroker = .starting(prefetch: running, thenCancel: true)
            self[tag] = consumer
            return .startAfterCancel(tag: tag)
        case .consuming:
            consumer.atBroker = existing.atBroker.cancelSent
            self[tag] = consumer
            return .cancelThenStart(tag: tag)
        }
    }

    /// basic.qos and basic.consume go out for `tag` with its prefetch: returns the fresh wire tag to
    /// send them with (`ConsumerTable`), nil for a tag not in the table.
    @discardableResult
    mutating func starting(_ tag: String) -> String? {
        guard let prefetch = self[tag]?.prefetch else { return nil }
        consumesSent += 1
        let wireTag = "\(tag).\(consumesSent)"
        self[tag]?.wireTag = wireTag
        self[tag]?.atBroker = .starting(prefetch: prefetch)
        unansweredConsumes.append(tag)
        return wireTag
    }

    /// What a basic.consume-ok for a tag asks of the loop.
    enum StartedStep: Equatable {
        /// Not starting (a stale answer): nothing to do.
        case none
        /// Running: tell the application.
        case running
        /// A stop or retune came meanwhile: send basic.cancel now.
        case cancelNow
    }

    /// basic.consume-ok came for `tag`. One for a consumer not starting (a stale answer) changes
    /// nothing.
    mutating func started(_ tag: String) -> StartedStep {
        if let index = unansweredConsumes.firstIndex(of: tag) { unansweredConsumes.remove(at: index) }
        guard let consumer = self[tag], case .starting(let prefetch, let thenCancel) = consumer.atBroker else { return .none }
        if thenCancel {
            self[tag]?.atBroker = .cancelling(prefetch: prefetch)
            return .cancelNow
        }
        self[tag]?.atBroker = .consuming(prefetch: prefetch)
        return .running
    }

    /// The broker closed the consume channel because of a basic.consume (most likely its queue
    /// does not exist): returns the refused consumer's tag, the oldest consume not answered yet.
    /// The broker answers methods in order, and discards the ones sent after the failing one until
    /// the channel is reopened. The refused consumer is not retried on every reconnect, which
    /// would only loop; the others start again on the next channel.
    mutating func consumeRefused() -> String? {
        guard !unansweredConsumes.isEmpty else { return nil }
        let tag = unansweredConsumes.removeFirst()
        self[tag]?.wanted = false
        self[tag]?.atBroker = .none
        return tag
    }

    /// Marks every consumer unwanted; returns the tags to send basic.cancel for (the ones running).
    mutating func stopAll() -> [String] {
        var toCancel: [String] = []
        for tag in tags {
            self[tag]?.wanted = false
            guard let consumer = self[tag] else { continue }
            switch consumer.atBroker {
            case .consuming:
                self[tag]?.atBroker = consumer.atBroker.cancelSent
                toCancel.append(tag)
            case .starting:
                // Cancelled on its consume-ok.
                self[tag]?.atBroker = consumer.atBroker.cancelSent
            case .none, .cancelling:
                continue
            }
        }
        return toCancel
    }

    /// basic.cancel-ok: true when the consumer is wanted again and must start now. A cancel-ok
    /// for a consumer not cancelling (the broker had cancelled it itself, and it was started again
    /// before our cancel's answer came) changes nothing.
    mutating func cancelConfirmed(_ tag: String) -> Bool {
        guard let consumer = self[tag], case .cancelling = consumer.atBroker else { return false }
        self[tag]?.atBroker = .none
        return consumer.wanted
    }

    /// The broker cancelled the consumer (its queue was deleted, or it failed over): not restarted
    /// until the application consumes again.
    mutating func cancelledByBroker(_ tag: String) {
        self[tag]?.wanted = false
        self[tag]?.atBroker = .none
    }

    /// The connection is gone, and with it every consumer at the broker; returns the tags to
    /// start on the next connection.
    mutating func connectionEnded() -> [String] {
        for tag in tags {
            self[tag]?.atBroker = .none
            self[tag]?.wireTag = nil
        }
        unansweredConsumes = []
        return wantedTags
    }

    /// A basic.consume or basic.cancel of ours is waiting for its answer.
    var changeInFlight: Bool {
        values.contains {
            switch $0.atBroker {
            case .starting, .cancelling: true
            case .none, .consuming: false
            }
        }
    }

    var wantedTags: [String] { tags.filter { self[$0]?.wanted == true } }
}
