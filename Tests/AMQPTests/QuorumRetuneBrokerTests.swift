@testable import AMQP
import NIOConcurrencyHelpers
import Testing

/// `--prefetch auto` restarts the job queue's consumer with another prefetch while deliveries are
/// in flight. On RabbitMQ 3.10.8 a quorum queue's consumer cancelled and started again under the
/// same tag crashes the broker's channel (`function_clause` in `rabbit_channel:handle_deliver0`,
/// the connection closed with 541 INTERNAL_ERROR, every unacked message handed back). It happens
/// on one node too: with the tag reused, this test lost its connection within a few restarts.
@Suite(.serialized) struct QuorumRetuneBrokerTests {
    static let messages = 6_000
    /// Deliveries between two restarts: the restarts follow progress, not the clock.
    static let restartEvery = 250

    @Test func restartingAQuorumQueueConsumerMidStreamKeepsTheConnection() async throws {
        let queue = Broker.uniqueName("quorum-retune")
        let events = EventRecorder()
        let client = try await Broker.connectedClient(
            topology: [.queue(name: queue, durable: true, arguments: ["x-queue-type": .string("quorum")])], events: events)
        try await publishAll(client, count: Self.messages, queue: queue)

        struct Seen { var count = 0; var redelivered = 0; var distinct = Set<String>() }
        let seen = NIOLockedValueBox(Seen())
        let handlerBox = NIOLockedValueBox<(@Sendable (AMQPDelivery) -> Void)?>(nil)
        let handler: @Sendable (AMQPDelivery) -> Void = { delivery in
            client.ack(delivery.tag)
            let count = seen.withLockedValue { seen in
                seen.count += 1
                seen.distinct.insert(String(decoding: delivery.body, as: UTF8.self))
                if delivery.redelivered { seen.redelivered += 1 }
                return seen.count
            }
            // Alternating prefetches, as the tuner did for a mix of one-device and chunk jobs.
            if count % Self.restartEvery == 0, let handler = handlerBox.withLockedValue({ $0 }) {
                client.consume(queue: queue, prefetch: count / Self.restartEvery % 2 == 0 ? 8000 : 481, handler: handler)
            }
        }
        handlerBox.withLockedValue { $0 = handler }
        client.consume(queue: queue, prefetch: 481, handler: handler)

        let done = await eventuallyAsync(timeout: .seconds(120)) {
            seen.withLockedValue { $0.count } >= Self.messages || events.disconnects > 0
        }
        #expect(done)
        #expect(events.disconnects == 0, "the broker closed the connection: \(events.events)")
        let final = seen.withLockedValue { $0 }
        // Each message once. Some come flagged redelivered: deliveries the channel had not passed on
        // when the cancel reached it go back to the queue, and come to the new consumer instead.
        #expect(final.count == Self.messages && final.distinct.count == Self.messages,
                "\(final.count) delivered, \(final.distinct.count) distinct, \(final.redelivered) flagged redelivered")
        #expect(try await client.messageCount(queue: queue) == 0)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    private func publishAll(_ client: AMQPClient, count: Int, queue: String) async throws {
        let failures = NIOLockedValueBox(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = NIOLockedValueBox(count)
            for index in 0..<count {
                client.publish(exchange: "", routingKey: queue, body: Array("message \(index)".utf8), properties: AMQPProperties()) { result in
                    if case .failure = result { failures.withLockedValue { $0 += 1 } }
                    if remaining.withLockedValue({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }
            }
        }
        #expect(failures.withLockedValue { $0 } == 0)
    }
}
