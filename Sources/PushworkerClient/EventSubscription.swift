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
    /// The cleanup, made by the first `close()`; every caller waits for it.
    private let closing = Mutex<Task<Void, Never>?>(nil)

    init(amqp: AMQPClient, queue: String, deletesQueue: Bool, input: AsyncStream<AMQPDelivery>.Continuation,
         onClose: @escaping @Sendable (EventSubscription) -> Void) {
        self.amqp = amqp
        self.queue = queue
        self.deletesQueue = deletesQueue
        self.input = input
        self.onClose = onClose
    }

    /// Idempotent: the first call ends the stream, deletes the queue (waiting at most 5 s: the
    /// broker may be unreachable, and the queue expires 60 s later anyway) and closes the
    /// connection; every call returns once that is done. The cleanup runs in a task of its own,
    /// so cancelling the caller (a timer that called `cancel()`) cannot cut the delete short.
    func close() async {
        let cleanup = closing.withLock { closing in
            if let running = closing { return running }
            let task = Task { await self.cleanUp() }
            closing = task
            return task
        }
        await cleanup.value
    }

    private func cleanUp() async {
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
