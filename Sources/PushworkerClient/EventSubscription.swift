import AMQP
import Synchronization

/// One subscription's own connection and queue. Its own connection, because the AMQP client
/// cancels consumers only all at once and redeclares its topology after every reconnect: a
/// connection per subscription ends with it and leaves nothing declared behind.
final class EventSubscription: Sendable {
    let amqp: AMQPClient
    let queue: String
    /// The private queue is deleted at the end; the shared unrouted queue is not.
    let deletesQueue: Bool
    private let input: AsyncStream<AMQPDelivery>.Continuation
    private let onClose: @Sendable (EventSubscription) -> Void
    private let closed = Mutex(false)

    init(amqp: AMQPClient, queue: String, deletesQueue: Bool, input: AsyncStream<AMQPDelivery>.Continuation,
         onClose: @escaping @Sendable (EventSubscription) -> Void) {
        self.amqp = amqp
        self.queue = queue
        self.deletesQueue = deletesQueue
        self.input = input
        self.onClose = onClose
    }

    /// Idempotent: the first call ends the stream, deletes the queue (waiting at most 5 s: the
    /// broker may be unreachable, and the queue expires 60 s later anyway) and closes the connection.
    func close() async {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        input.finish()
        onClose(self)
        amqp.stopConsuming()
        guard deletesQueue else { return await amqp.shutdown() }
        let amqp = amqp
        let queue = queue
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await amqp.deleteQueue(queue) }
            group.addTask { try? await Task.sleep(for: .seconds(5)) }
            await group.next()
            group.cancelAll()
            // Also fails a delete still waiting for the broker, so the group can end.
            await amqp.shutdown()
        }
    }
}
