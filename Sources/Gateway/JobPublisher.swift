import AMQP
import Logging
import PushworkerClient

/// Publishes jobs to the job queue with publisher confirms (the Swift client library's confirmed
/// publish), on one connection that reconnects by itself. "Published" means the broker confirmed
/// the message as persisted.
final class JobPublisher: Sendable {
    let client: PushworkerClient
    let timeout: Duration

    init(configuration: AMQPConfiguration, queue: String, queueType: QueueType, timeout: Duration, logger: Logger) {
        // A classic job queue is declared as `pushworker send` and the worker declare it (durable, no
        // arguments), so a gateway that starts first still has a queue to publish into; a quorum
        // one must exist (the workers declare it).
        client = PushworkerClient(configuration: .init(amqpURL: configuration.url, caFile: configuration.caFile, jobQueue: queue,
                                                       connectionName: configuration.connectionName, queueType: queueType), logger: logger)
        self.timeout = timeout
    }

    func start() { client.start() }
    func shutdown() async { await client.shutdown() }
    var isConnected: Bool { client.isConnected }

    /// Throws a 503 answer when the broker is unreachable, refused the message or did not confirm
    /// it within the timeout (it may then still arrive: a retry with the same id could send twice).
    func publish(body: [UInt8], id: String) async throws(GatewayAnswer) {
        // While disconnected, answer now: the client would wait for the connection up to the timeout.
        guard client.isConnected else {
            throw GatewayAnswer.error(503, "not connected to the broker; the job was not published, retry")
        }
        do {
            try await client.publish(jobJSON: body, id: id, timeout: timeout)
        } catch {
            if case .timeout = error {
                throw GatewayAnswer.error(503, "the broker did not confirm the job within \(timeout); it may still be delivered")
            }
            throw GatewayAnswer.error(503, "\(error); the job was not published, retry")
        }
    }
}
