import AMQP

/// What the job pipeline asks of the broker, and nothing more: consume the lanes, settle a
/// delivery, publish with confirms, declare the topology again. `AMQPClient` is the broker; tests
/// give `JobProcessor`, `ResultPublisher` and `ConsumptionGate` a recording one, so settlement,
/// holds and retries are checked without RabbitMQ (the integration suites check the real one).
protocol JobBroker: Sendable {
    func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int, bodyRoom: (@Sendable () -> Int)?,
                 handler: @escaping @Sendable (AMQPDelivery) -> Void)
    func stopConsuming()
    func ack(_ tag: AMQPDeliveryTag, multiple: Bool)
    func nack(_ tag: AMQPDeliveryTag, requeue: Bool, multiple: Bool)
    /// `completion` runs once the broker confirmed the message (or refused it, or the connection
    /// was lost first).
    func publish(exchange: String, routingKey: String, body: [UInt8], properties: AMQPProperties, mandatory: Bool,
                 completion: @escaping @Sendable (Result<Void, AMQPError>) -> Void)
    func declare(_ declarations: [AMQPDeclaration]) async throws(AMQPError)
    /// A new publish channel, after repeated nacks: what is in flight on the old one fails.
    func renewPublishChannel() async throws(AMQPError)
}

extension JobBroker {
    func consume(queue: String, prefetch: UInt16, handler: @escaping @Sendable (AMQPDelivery) -> Void) {
        consume(queue: queue, prefetch: prefetch, maxBodyBytes: .max, bodyRoom: nil, handler: handler)
    }

    func ack(_ tag: AMQPDeliveryTag) { ack(tag, multiple: false) }
    func nack(_ tag: AMQPDeliveryTag, requeue: Bool) { nack(tag, requeue: requeue, multiple: false) }
}

extension AMQPClient: JobBroker {}
