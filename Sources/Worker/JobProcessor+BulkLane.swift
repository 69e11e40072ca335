import AMQP
import PushCore

/// The bulk lane (`<job queue>.bulk`): fan-out chunks and jobs marked `"bulk": true` wait there, so
/// a broadcast never sits in the job queue ahead of a transactional job, and their rounds use at
/// most their share of the devices in flight (`DevicesInFlight`).
extension JobProcessor {
    /// The worker and the bulk delay queues put bulk jobs there with the lane's name as routing key.
    func isInBulkLane(_ delivery: AMQPDelivery) -> Bool {
        delivery.routingKey == configuration.bulkQueue
    }

    /// A job marked bulk that was published to the job queue moves to the bulk lane as it is
    /// (confirmed before the ack, so it cannot be lost), and is sent from there.
    func moveToBulkLane(_ delivery: AMQPDelivery, log: JobLog) async {
        var properties = delivery.properties
        properties.persistent = true
        let message = ResultPublisher.Message(exchange: "", routingKey: configuration.bulkQueue, body: delivery.body,
                                              properties: properties, mandatory: true,
                                              fallback: Self.deferralFallback(of: delivery, deferrals: Self.deferrals(of: delivery)))
        guard await results.publish([message], logger: log.logger) else { return }
        amqp.ack(delivery.tag)
    }
}
