import AMQP
import Testing

/// `AMQPClient.hold`, `acknowledge` and `releaseHeld` (what `pushworker dead` is built on).
@Suite struct HeldMessageBrokerTests {
    private func publish(_ amqp: AMQPClient, _ queue: String, _ texts: [String]) async throws {
        for text in texts {
            try await amqp.publish(exchange: "", routingKey: queue, body: Array(text.utf8), properties: AMQPProperties(), mandatory: true)
        }
    }

    @Test func heldMessagesGoBackInPlaceAndAckedOnesDoNot() async throws {
        let queue = Services.uniqueName("held")
        try await Services.withQueues([queue]) { amqp in
            try await publish(amqp, queue, ["1", "2", "3", "4"])
            var held: [AMQPHeldMessage] = []
            while let message = try await amqp.hold(queue: queue) { held.append(message) }
            let heldBodies = held.map { String(decoding: $0.delivery.body, as: UTF8.self) }
            #expect(heldBodies == ["1", "2", "3", "4"])
            #expect(try await amqp.messageCount(queue: queue) == 0)
            try await amqp.acknowledge(held[1])
            try await amqp.releaseHeld()
            let left = try await DeadCopies.drain(amqp, queue).map { String(decoding: $0.body, as: UTF8.self) }
            #expect(left == ["1", "3", "4"])
        }
    }

    /// After the channel closed its tags mean nothing: an ack then is refused, never sent for
    /// another message that took the same tag on the new channel.
    @Test func anAckAfterTheChannelClosedIsRefused() async throws {
        let queue = Services.uniqueName("stale")
        try await Services.withQueues([queue]) { amqp in
            try await publish(amqp, queue, ["a", "b"])
            let stale = try #require(try await amqp.hold(queue: queue))
            try await amqp.releaseHeld()
            let again = try #require(try await amqp.hold(queue: queue))
            #expect(again.delivery.tag.value == stale.delivery.tag.value)
            let error = await #expect(throws: AMQPError.self) { try await amqp.acknowledge(stale) }
            #expect(error?.code == .channelClosed)
            try await amqp.releaseHeld()
            #expect(try await amqp.messageCount(queue: queue) == 2)
        }
    }

    /// A failed admin request (a passive declare of a missing queue) closes the admin channel:
    /// what it held goes back, and its old tags are refused.
    @Test func aFailedAdminRequestGivesHeldMessagesBack() async throws {
        let queue = Services.uniqueName("closing")
        try await Services.withQueues([queue]) { amqp in
            try await publish(amqp, queue, ["x"])
            let held = try #require(try await amqp.hold(queue: queue))
            await #expect(throws: AMQPError.self) { try await amqp.messageCount(queue: Services.uniqueName("absent")) }
            await #expect(throws: AMQPError.self) { try await amqp.acknowledge(held) }
            #expect(try await amqp.messageCount(queue: queue) == 1)
        }
    }
}
