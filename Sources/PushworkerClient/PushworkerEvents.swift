import AMQP

/// The events of a subscription (`PushworkerClient.events(for:)`), in the order the broker
/// delivers them. Iterate it once. It ends after `cancel()`, when the iterating task is
/// cancelled, or when the broker cancels the consumer (its queue was deleted); the subscription's
/// connection and private queue go away then, or when the sequence is released.
///
/// Each event is acknowledged when `next()` hands it out, so `unroutedEvents()` removes from the
/// unrouted queue only what was actually read.
public final class PushworkerEvents: AsyncSequence, Sendable {
    public typealias Element = PushworkerEvent

    let subscription: EventSubscription
    private let stream: AsyncStream<AMQPDelivery>
    /// Only this job's events are handed out (the others are acknowledged and dropped).
    public let jobID: PushworkerJobID?

    init(subscription: EventSubscription, stream: AsyncStream<AMQPDelivery>, jobID: PushworkerJobID?) {
        self.subscription = subscription
        self.stream = stream
        self.jobID = jobID
    }

    /// The queue the events are read from.
    public var queue: String { subscription.queue }

    /// Ends the iteration, deletes the private queue and closes the subscription's connection.
    public func cancel() async {
        await subscription.close()
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), events: self)
    }

    deinit {
        // Nobody can read the events any more: free the queue and the connection.
        let subscription = subscription
        Task { await subscription.close() }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<AMQPDelivery>.Iterator
        /// Keeps the subscription open while it is being iterated.
        let events: PushworkerEvents

        public mutating func next() async -> PushworkerEvent? {
            while let delivery = await base.next() {
                if let event = events.take(delivery) { return event }
            }
            return nil
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> PushworkerEvent? {
            while let delivery = await base.next(isolation: actor) {
                if let event = events.take(delivery) { return event }
            }
            return nil
        }
    }

    /// Acknowledges the delivery; its event when it is one of the job's.
    private func take(_ delivery: AMQPDelivery) -> PushworkerEvent? {
        subscription.amqp.ack(delivery.tag)
        let event = PushworkerEvent(routingKey: delivery.routingKey, body: delivery.body)
        if let jobID, event.jobID != jobID { return nil }
        return event
    }
}
