import AMQP
import NIOConcurrencyHelpers
@testable import Worker

/// A `JobBroker` whose confirms a test scripts: it records every consume, ack, nack and publish,
/// and answers each publish with what `confirm` says (confirmed by default), or holds it until
/// `confirmHeld`. Deliveries are made by the test and handed to the processor directly.
final class RecordingBroker: JobBroker {
    struct Published: Sendable {
        let exchange: String
        let routingKey: String
        let body: [UInt8]
        let properties: AMQPProperties
        let mandatory: Bool
    }

    /// What the broker did, in order: `publish`, then `ack` only once confirmed.
    enum Step: Sendable, Equatable {
        case published(routingKey: String)
        case acked(UInt64)
        case nacked(UInt64, requeue: Bool)
    }

    private struct State {
        var published: [Published] = []
        var steps: [Step] = []
        var held: [@Sendable (Result<Void, AMQPError>) -> Void] = []
        var consuming: Set<String> = []
        var declarations = 0
    }

    private let state = NIOLockedValueBox(State())
    /// nil holds the confirm until `confirmHeld`.
    private let confirm: @Sendable (Published) -> Result<Void, AMQPError>?

    init(confirm: @escaping @Sendable (Published) -> Result<Void, AMQPError>? = { _ in .success(()) }) {
        self.confirm = confirm
    }

    var published: [Published] { state.withLockedValue { $0.published } }
    var steps: [Step] { state.withLockedValue { $0.steps } }
    var acked: [UInt64] { steps.compactMap { if case let .acked(tag) = $0 { tag } else { nil } } }
    var consuming: Set<String> { state.withLockedValue { $0.consuming } }

    func confirmHeld() {
        let held = state.withLockedValue { state in
            defer { state.held = [] }
            return state.held
        }
        for completion in held { completion(.success(())) }
    }

    func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int, bodyRoom: (@Sendable () -> Int)?,
                 handler: @escaping @Sendable (AMQPDelivery) -> Void) {
        _ = state.withLockedValue { $0.consuming.insert(queue) }
    }

    func stopConsuming() { state.withLockedValue { $0.consuming = [] } }

    func ack(_ tag: AMQPDeliveryTag, multiple: Bool) { state.withLockedValue { $0.steps.append(.acked(tag.value)) } }

    func nack(_ tag: AMQPDeliveryTag, requeue: Bool, multiple: Bool) {
        state.withLockedValue { $0.steps.append(.nacked(tag.value, requeue: requeue)) }
    }

    func publish(exchange: String, routingKey: String, body: [UInt8], properties: AMQPProperties, mandatory: Bool,
                 completion: @escaping @Sendable (Result<Void, AMQPError>) -> Void) {
        let message = Published(exchange: exchange, routingKey: routingKey, body: body, properties: properties, mandatory: mandatory)
        state.withLockedValue { state in
            state.published.append(message)
            state.steps.append(.published(routingKey: routingKey))
        }
        guard let result = confirm(message) else {
            state.withLockedValue { $0.held.append(completion) }
            return
        }
        completion(result)
    }

    func declare(_ declarations: [AMQPDeclaration]) async throws(AMQPError) { state.withLockedValue { $0.declarations += 1 } }
    func renewPublishChannel() async throws(AMQPError) {}
}
