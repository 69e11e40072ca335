/// One queue as `pushworker queues` shows it: ready messages and consumers (a passive
/// queue.declare), or why they are not known. AMQP 0-9-1 tells no unacked count: that needs the
/// management plugin, which the worker does not rely on.
public struct QueueDepth: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case present(messages: Int, consumers: Int)
        /// The broker answered 404: not declared (yet).
        case missing
        /// Any other failure, in words.
        case unknown(String)
    }

    public let entry: QueueRoster.Entry
    public let state: State
}
