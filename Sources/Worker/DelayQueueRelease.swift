import AMQP
import Logging
import PushCore
import Synchronization

/// The consumer of the quorum delay queue (`DelayQueueEntry`): holds each message unacked until it
/// is due, publishes it to its lane with a confirm, and acks it only once confirmed. What it costs:
/// up to `delayPrefetch` messages per worker unacked and in memory, and no delay may reach the
/// broker's `consumer_timeout` (`WorkerConfiguration.longestHeldDelay`). A copy confirmed just
/// before the connection dropped is released twice (at most `delayPrefetch` per worker); nothing
/// is ever released early by a shutdown.
final class DelayQueueRelease: Sendable {
    private let amqp: AMQPClient
    private let configuration: WorkerConfiguration
    private let delayed: DelayedWork
    private let logger: Logger
    private let lanes: Set<String>
    private let stopping = Atomic<Bool>(false)
    /// The wait before another try at a copy the broker did not confirm.
    static let retryDelays: ClosedRange<Duration> = .seconds(1)...(.seconds(30))

    init(amqp: AMQPClient, configuration: WorkerConfiguration, delayed: DelayedWork, logger: Logger) {
        self.amqp = amqp
        self.configuration = configuration
        self.delayed = delayed
        self.logger = logger
        lanes = [configuration.jobQueue, configuration.bulkQueue]
    }

    /// Held messages are left unacked from now on: closing the connection returns them.
    func stop() {
        stopping.store(true, ordering: .releasing)
    }

    /// The delay queue's delivery handler (on the AMQP thread; `ConsumptionGate` consumes it
    /// with the lanes, reading bodies whole whatever their size: a body cut short could not be
    /// released).
    func hold(_ delivery: AMQPDelivery) {
        let entry = DelayQueueEntry(headers: delivery.properties.headers, lanes: lanes, defaultLane: configuration.jobQueue)
        let wait = entry.wait(now: .now(), longest: WorkerConfiguration.longestHeldDelay)
        // Refused once the worker stops: the message stays unacked, which is what stopping wants.
        delayed.schedule(after: wait) { [self] in release(delivery, to: entry.lane, backoff: Backoff(range: Self.retryDelays)) }
    }

    private func release(_ delivery: AMQPDelivery, to lane: String, backoff: Backoff) {
        let step = DelayQueueEntry.releaseStep(stopping: stopping.load(ordering: .acquiring),
                                               deliveredOn: delivery.tag.connectionGeneration, connected: amqp.connectionGeneration)
        guard step == .publish else { return }
        amqp.publish(exchange: "", routingKey: lane, body: delivery.body, properties: DelayQueueEntry.released(delivery.properties),
                     mandatory: true) { [self] result in
            switch result {
            case .success:
                amqp.ack(delivery.tag)
            case .failure(let error):
                var next = backoff
                let wait = next.next()
                logger.warning("a held retry was not confirmed by the broker; trying again", metadata: [
                    LogKeys.queue: "\(lane)", LogKeys.error: "\(error)", "push.retry_in": "\(wait)",
                ])
                delayed.schedule(after: wait) { [self, next] in release(delivery, to: lane, backoff: next) }
            }
        }
    }
}
