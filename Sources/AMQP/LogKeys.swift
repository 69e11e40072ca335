/// Metadata keys of the AMQP client's log lines, in one place (dotted, prefixed `amqp.`).
enum LogKeys {
    static let arguments = "amqp.arguments"
    static let channel = "amqp.channel"
    static let consumer = "amqp.consumer"
    static let count = "amqp.count"
    static let error = "amqp.error"
    static let exchange = "amqp.exchange"
    static let generation = "amqp.generation"
    static let heartbeat = "amqp.heartbeat"
    static let method = "amqp.method"
    static let prefetch = "amqp.prefetch"
    static let queue = "amqp.queue"
    static let reason = "amqp.reason"
    static let reconnectIn = "amqp.reconnect_in"
    static let routingKey = "amqp.routing_key"
    static let tag = "amqp.tag"
}
