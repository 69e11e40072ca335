import AMQP

extension JobProcessor {
    /// A delivery whose body found no room in memory (`BodyBytesInFlight`): back to the queue,
    /// unread, before any job starts for it. Its redelivery is no sign of a poison job, so the
    /// count that cuts redelivery loops is stepped back (in a task).
    func handBack(_ delivery: AMQPDelivery) {
        amqp.nack(delivery.tag, requeue: true)
        status.bodyHandedBack()
        let redeliveries = redeliveries
        _ = tasks.submit { await redeliveries.forgive(delivery) }
    }
}
