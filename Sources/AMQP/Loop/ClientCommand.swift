/// Work handed from any thread to the AMQP owner thread.
enum ClientCommand: Sendable {
    case publish(PublishRequest)
    case ack(AMQPDeliveryTag, multiple: Bool)
    case nack(AMQPDeliveryTag, requeue: Bool, multiple: Bool)
    case consume(queue: String, prefetch: UInt16, maxBodyBytes: Int, bodyRoom: (@Sendable () -> Int)? = nil,
                 handler: @Sendable (AMQPDelivery) -> Void)
    case stopConsuming
    case admin(AdminRequest, completion: @Sendable (Result<AdminResult, AMQPError>) -> Void)

    /// Completes the command's caller with `error`; commands without a caller are dropped.
    func fail(with error: AMQPError) {
        switch self {
        case .publish(let request): request.completion(.failure(error))
        case .admin(_, let completion): completion(.failure(error))
        case .ack, .nack, .consume, .stopConsuming: break
        }
    }
}

struct PublishRequest: Sendable {
    var exchange: String
    var routingKey: String
    var body: [UInt8]
    var properties: AMQPProperties
    var mandatory: Bool
    var completion: @Sendable (Result<Void, AMQPError>) -> Void
}

/// An admin request with its caller's completion, as the owner thread carries it.
struct AdminCommand: Sendable {
    let request: AdminRequest
    let completion: @Sendable (Result<AdminResult, AMQPError>) -> Void
}

/// Synchronous broker operations, run on the admin channel so a channel error they cause
/// (e.g. 404 from a passive declare) never disturbs consuming or publishing.
enum AdminRequest: Sendable {
    case declare([AMQPDeclaration])
    case get(queue: String)
    case held(HeldRequest)
    case messageCount(queue: String)
    case consumerCount(queue: String)
    case purge(queue: String)
    case deleteQueue(queue: String)
    case deleteExchange(exchange: String)
    /// Closes the publish channel and opens a fresh one (confirms on): its publishes in flight fail
    /// (their callers publish them again).
    case renewPublishChannel
}

enum AdminResult: Sendable {
    case done
    case delivery(AMQPDelivery?)
    case held(AMQPHeldMessage?)
    case count(Int)
}

/// basic.get without ack, its ack, and giving back what is held (`AMQPClient+Held`).
enum HeldRequest: Sendable {
    case hold(queue: String)
    case ack(AMQPHeldMessage)
    case release
}
