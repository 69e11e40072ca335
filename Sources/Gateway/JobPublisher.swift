import AMQP
import Logging
import NIOConcurrencyHelpers

/// Publishes jobs to the job queue with publisher confirms, on one connection that reconnects by
/// itself. An answer of "published" means the broker confirmed the message as persisted.
final class JobPublisher: Sendable {
    let amqp: AMQPClient
    let queue: String
    let timeout: Duration

    init(configuration: AMQPConfiguration, queue: String, timeout: Duration, logger: Logger) {
        // Declared as `pushworker send` and the worker declare it (durable, no arguments), so a
        // gateway that starts first still has a queue to publish into.
        amqp = AMQPClient(configuration: configuration, topology: [.queue(name: queue)], logger: logger)
        self.queue = queue
        self.timeout = timeout
    }

    func start() { amqp.start() }
    func shutdown() async { await amqp.shutdown() }
    var isConnected: Bool { amqp.isConnected }

    /// Throws a 503 answer when the broker is unreachable, refused the message or did not confirm
    /// it within the timeout (it may then still arrive: a retry with the same id could send twice).
    func publish(body: [UInt8], id: String, queue target: String? = nil) async throws(GatewayAnswer) {
        var properties = AMQPProperties()
        properties.contentType = "application/json"
        properties.messageID = id
        properties.persistent = true
        // The first of the confirm and the timer answers; the other finds the answer given.
        let answered = NIOLockedValueBox(false)
        let outcome: Result<Void, AMQPError>? = await withCheckedContinuation { continuation in
            let answer: @Sendable (Result<Void, AMQPError>?) -> Void = { result in
                let first = answered.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: result) }
            }
            let timer = Task { [timeout] in
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                answer(nil)
            }
            // Mandatory: a queue deleted after the declare fails the request instead of the
            // broker confirming a message it dropped.
            amqp.publish(exchange: "", routingKey: target ?? queue, body: body, properties: properties, mandatory: true) { result in
                answer(result)
                timer.cancel()
            }
        }
        switch outcome {
        case .success: return
        case let .failure(error):
            throw GatewayAnswer.error(503, "the broker did not take the job (\(error.message)); it was not published, retry")
        case nil:
            throw GatewayAnswer.error(503, "the broker did not confirm the job within \(timeout); it may still be delivered")
        }
    }
}
