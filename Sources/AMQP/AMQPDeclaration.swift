/// Topology the client (re)declares after every connect. Declarations are idempotent as long as
/// the arguments stay the same (a change is a 406 PRECONDITION_FAILED from the broker).
public enum AMQPDeclaration: Sendable, Hashable {
    /// `arguments` (e.g. `alternate-exchange`) are best effort: an exchange that already exists
    /// with other arguments is kept as it is, with a warning, rather than failing the connection.
    case exchange(name: String, type: String, durable: Bool = true, arguments: [String: AMQPFieldValue] = [:])
    case queue(name: String, durable: Bool = true, arguments: [String: AMQPFieldValue] = [:])
    /// Checks that the queue exists (a passive declare), whatever its type and arguments: for a
    /// publisher of a queue that someone else declares, such as a quorum queue, which refuses a
    /// declaration with other arguments. A missing queue fails the connection (404).
    case existingQueue(name: String)
    case binding(queue: String, exchange: String, routingKey: String)
}
