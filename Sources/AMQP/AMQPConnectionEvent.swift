/// Connection life-cycle notifications, delivered on the AMQP thread (handlers must not block).
public enum AMQPConnectionEvent: Sendable {
    /// A connection is up, topology declared and consumers restarted.
    case connected(generation: UInt64)
    /// The connection was lost; deliveries not yet acked will be redelivered by the broker.
    case disconnected(reason: String)
    /// The broker cancelled a consumer (queue deleted, quorum leader moved). It is not restarted
    /// automatically; call `consume` again if the queue is expected to come back.
    case consumerCancelledByServer(queue: String)
    /// A `consume` call took effect: the broker answered consume-ok.
    case consumerStarted(queue: String)
    /// A `consume` call failed (the queue is missing, or has an exclusive consumer): nothing is
    /// consumed from `queue` until `consume` is called again.
    case consumeFailed(queue: String, reason: String)
    /// The broker stopped reading publishes (resource alarm); publishes wait until unblocked.
    case blocked(reason: String)
    case unblocked
}
