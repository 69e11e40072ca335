/// The delays and limits of the AMQP owner thread's decisions (`ConnectionPolicy`).
struct ConnectionTiming: Sendable {
    /// Longest an ack waits to be sent with others (`ConnectionPolicy.dueAcks`).
    var ackDelay = Duration.milliseconds(2)
    var ackBatch = 256
    /// Longest an ack waits for the deliveries before it (`ConnectionPolicy.dueAcks`).
    var ackHoldLimit = Duration.milliseconds(100)
    /// Longest buffered frames wait for more before they are written, when the loop has
    /// nothing else to do (`ConnectionPolicy.write`).
    var writeCoalescing = Duration.milliseconds(1)
    /// A broker that confirms nothing for this long is treated as gone: the connection is
    /// dropped and made again, so no job waits forever for a confirm (and holds its slot).
    var confirmTimeout = Duration.seconds(60)
    /// A publish not confirmed this long after it was written fails (the caller retries it),
    /// though the broker confirms others: RabbitMQ may never confirm one routed to a quorum
    /// queue without a majority. Up to `PublishConfirms.markInterval` more in practice.
    var publishAgeLimit = Duration.seconds(60)
}
