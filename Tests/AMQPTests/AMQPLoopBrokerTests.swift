@testable import AMQP
import Foundation
import NIOConcurrencyHelpers
import Testing

/// The owner thread's command handling against the real RabbitMQ: what a batch that breaks the
/// connection leaves behind, and how many consumers the broker sees.
@Suite(.serialized) struct AMQPLoopBrokerTests {
    /// How often each command's caller heard back, and with what.
    final class Answers: Sendable {
        private let state = NIOLockedValueBox<[Int: [Bool]]>([:])
        func record(_ id: Int, _ succeeded: Bool) { state.withLockedValue { $0[id, default: []].append(succeeded) } }
        var all: [Int: [Bool]] { state.withLockedValue { $0 } }
    }

    /// RabbitMQ answers an exchange.declare of an unknown type by closing the whole connection
    /// (503 COMMAND_INVALID): a failure at a chosen position of a batch, on the real broker.
    static func connectionBreaker(_ answers: Answers, id: Int) -> ClientCommand {
        .admin(.declare([.exchange(name: Broker.uniqueName("bogus"), type: "x-no-such-type", durable: false)]),
               completion: { answers.record(id, (try? $0.get()) != nil) })
    }

    /// A batch with the connection breaking at each position: every publish and RPC is answered
    /// exactly once, and a consume queued after the failure still takes effect on the next connection.
    @Test(arguments: 0...6)
    func everyCommandOfABrokenBatchCompletesOnce(breakAt position: Int) async throws {
        let queue = Broker.uniqueName("batch")
        let events = EventRecorder()
        let client = try await Broker.connectedClient(topology: [.queue(name: queue, durable: false)], events: events)
        let answers = Answers()
        func publish(_ id: Int) -> ClientCommand {
            .publish(PublishRequest(exchange: "", routingKey: queue, body: Array("job \(id)".utf8), properties: AMQPProperties(),
                                    mandatory: true, completion: { answers.record(id, (try? $0.get()) != nil) }))
        }
        var commands: [ClientCommand] = [
            publish(0), publish(1),
            .admin(.messageCount(queue: queue), completion: { answers.record(2, (try? $0.get()) != nil) }),
            publish(3),
            .consume(queue: queue, prefetch: 10, maxBodyBytes: .max, bodyRoom: nil, handler: { _ in }),
            publish(5),
        ]
        commands.insert(Self.connectionBreaker(answers, id: 99), at: position)
        client.enqueue(batch: commands)

        let answered = await eventually { answers.all.count == 6 }
        #expect(answered, "answers: \(answers.all)")
        #expect(answers.all.values.allSatisfy { $0.count == 1 }, "each command answered once: \(answers.all)")
        #expect(answers.all[99] == [false])
        #expect(await eventually { events.connectedGenerations.count >= 2 }, "reconnected")
        try await client.waitUntilConnected(timeout: .seconds(10))
        #expect(try await client.consumerCount(queue: queue) == 1, "the consume survives the broken batch")
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    /// Consuming is idempotent per queue, as the broker counts consumers: repeated starts, a restart
    /// with another prefetch, double stops, and a server cancel followed by two consumes (a retune,
    /// then the consume scheduled for the cancel) each leave exactly one consumer.
    @Test func theBrokerSeesOneConsumerPerQueueWhateverTheOrder() async throws {
        let queue = Broker.uniqueName("consumers")
        let events = EventRecorder()
        let client = try await Broker.connectedClient(topology: [.queue(name: queue, durable: false)], events: events)
        let handler: @Sendable (AMQPDelivery) -> Void = { _ in }

        client.consume(queue: queue, prefetch: 10, handler: handler)
        client.consume(queue: queue, prefetch: 10, handler: handler)
        client.consume(queue: queue, prefetch: 20, handler: handler)
        #expect(try await client.consumerCount(queue: queue) == 1)

        client.stopConsuming()
        client.stopConsuming()
        #expect(try await client.consumerCount(queue: queue) == 0)
        client.consume(queue: queue, prefetch: 30, handler: handler)
        client.stopConsuming()
        client.consume(queue: queue, prefetch: 40, handler: handler)
        #expect(try await client.consumerCount(queue: queue) == 1)

        // The queue is deleted under the consumer: the broker cancels it.
        try await client.deleteQueue(queue)
        #expect(await eventually { events.cancelledQueues.contains(queue) })
        try await client.declare([.queue(name: queue, durable: false)])
        client.consume(queue: queue, prefetch: 80, handler: handler)
        client.consume(queue: queue, prefetch: 80, handler: handler)
        #expect(try await client.consumerCount(queue: queue) == 1)

        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    /// A retune and a stop-then-resume while deliveries pour in: the cancel is not waited for in
    /// place, so the deliveries still in flight reach the handler (and are acked) on the way to
    /// its cancel-ok. Every message arrives exactly once, none redelivered, and the broker ends
    /// with one consumer at the newest prefetch.
    @Test func restartsWhileDeliveriesStreamDeliverEachMessageOnce() async throws {
        let queue = Broker.uniqueName("streaming")
        let client = try await Broker.connectedClient(topology: [.queue(name: queue, durable: false)], events: EventRecorder())
        let total = 3000
        for index in 0..<total {
            try await client.publish(exchange: "", routingKey: queue, body: Array("\(index)".utf8), properties: AMQPProperties())
        }
        let collector = DeliveryCollector()
        let handler: @Sendable (AMQPDelivery) -> Void = { delivery in
            collector.add(delivery)
            client.ack(delivery.tag)
        }
        client.consume(queue: queue, prefetch: 1000, handler: handler)
        #expect(await collector.wait(for: 500))
        client.consume(queue: queue, prefetch: 50, handler: handler)
        #expect(await collector.wait(for: 1500))
        client.stopConsuming()
        client.consume(queue: queue, prefetch: 200, handler: handler)
        #expect(await collector.wait(for: total))

        #expect(try await client.consumerCount(queue: queue) == 1)
        #expect(try await client.messageCount(queue: queue) == 0)
        let bodies = collector.all.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies.count == total && Set(bodies).count == total, "each message exactly once")
        #expect(!collector.all.contains { $0.redelivered })
        try await client.deleteQueue(queue)
        await client.shutdown()
    }
}
