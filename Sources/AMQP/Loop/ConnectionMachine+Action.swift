extension ConnectionMachine {
    /// Everything the machine asks of the loop: the loop performs these in order and decides nothing.
    enum Action {
        // The connection
        /// Open a connection to this node, declare the topology, then `opened()`.
        case connect(AMQPEndpoint)
        /// The connection is up (counted from 1): tell the callers.
        case reportConnected(generation: UInt64)
        /// A connect attempt failed; the next is in `reconnectIn`.
        case reportConnectFailed(AMQPError, reconnectIn: Duration)
        /// The connection ended; the next attempt is in `reconnectIn`.
        case reportDisconnected(AMQPError, reconnectIn: Duration)
        /// Give up the connection (a consume channel gone, a silent broker): `lost(_:now:)` follows.
        case drop(AMQPError)
        /// Write the frames buffered so far.
        case flush

        // Acks
        case sendAcks([AckFrame])
        case ack(AckFrame)
        case nack(AckFrame, requeue: Bool)
        /// An ack or nack the channel would refuse (a 406 requeues everything in flight): not sent.
        case ignoreSettle(AMQPDeliveryTag, IgnoredSettle)

        // Deliveries and consumers
        /// Hand the delivery just read to the consumer at this index (`ConsumerTable.index(of:)`).
        case deliver(consumer: Int, tag: AMQPDeliveryTag)
        /// A delivery for no consumer of ours: nack it with requeue, unread.
        case requeueUnknownDelivery(channel: UInt16, deliveryTag: UInt64, wireTag: String)
        /// basic.qos and basic.consume.
        case startConsumer(queue: String, wireTag: String, prefetch: UInt16)
        case cancelConsumer(wireTag: String)
        case report(AMQPConnectionEvent)

        // Publishes
        /// Write the publish, then `written(_:returnKey:now:)`.
        case write(Publish)
        /// Publishes the broker settled (or that can no longer be): hand each its result.
        case complete(Settled)
        /// Publishes whose confirm is overdue: failed for a retry, and worth a warning.
        case completeOverdue(Settled)
        /// Close the publish channel if open, open it again with confirms on.
        case reopenPublishChannel

        // Admin requests
        case runAdmin(Admin)
        case failAdmin(Admin, AMQPError)
    }

    enum IgnoredSettle: Equatable {
        /// The tag is of an earlier connection: the broker already requeued it.
        case earlierConnection
        /// Not an unacked delivery of this connection (settled already, or never ours).
        case unknownDelivery
    }
}
