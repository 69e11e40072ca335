import AMQP
import Foundation
import NIOConcurrencyHelpers
import Testing

/// Against the real RabbitMQ (AMQP_URL, default amqp://guest:guest@127.0.0.1:5672/).
@Suite(.serialized) struct AMQPBrokerTests {
    @Test func declaresTopologyIdempotently() async throws {
        let exchange = Broker.uniqueName("exchange")
        let queue = Broker.uniqueName("queue")
        let topology: [AMQPDeclaration] = [
            .exchange(name: exchange, type: "direct"),
            .queue(name: queue, arguments: ["x-max-priority": 5, "x-queue-mode": "default"]),
            .binding(queue: queue, exchange: exchange, routingKey: "k"),
        ]
        let client = try await Broker.connectedClient(topology: topology)
        try await client.declare(topology)  // same again: no error
        let second = try await Broker.connectedClient(topology: topology)
        await second.shutdown()
        try await client.publish(exchange: exchange, routingKey: "k", body: [1], properties: AMQPProperties())
        #expect(try await client.messageCount(queue: queue) == 1)

        // A passive declare of a missing queue closes only the admin channel.
        await #expect(throws: AMQPError.self) { try await client.messageCount(queue: Broker.uniqueName("missing")) }
        do {
            _ = try await client.messageCount(queue: Broker.uniqueName("missing"))
        } catch {
            #expect(error.code == .channelClosed && error.status == 404)
        }
        #expect(client.isConnected)
        try await client.purge(queue: queue)
        #expect(try await client.messageCount(queue: queue) == 0)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func tenThousandConfirmedPublishesRoundTrip() async throws {
        let queue = Broker.uniqueName("bulk")
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)])
        let total = 10_000
        let headers: [String: AMQPFieldValue] = [
            "s": "text", "i": .int(-42), "b": true, "d": 1.5, "x": .bytes([0, 255]), "t": .timestamp(1_700_000_000),
            "a": .array(["one", .int(2), .table(["nested": .bool(false)])]), "f": .table(["k": "v"]), "v": .void,
        ]
        let failures = NIOLockedValueBox<[AMQPError]>([])
        let start = ContinuousClock.now
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = NIOLockedValueBox(total)
            for index in 0..<total {
                var properties = AMQPProperties(contentType: "application/json", messageID: "m\(index)", headers: headers)
                properties.correlationID = "c\(index)"
                properties.type = "job"
                properties.appID = "tests"
                properties.timestamp = 1_700_000_000
                properties.expiration = "600000"
                client.publish(exchange: "", routingKey: queue, body: Array("{\"n\":\(index)}".utf8), properties: properties) { result in
                    if case .failure(let error) = result { failures.withLockedValue { $0.append(error) } }
                    if remaining.withLockedValue({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        #expect(failures.withLockedValue { $0.isEmpty })
        #expect(try await client.messageCount(queue: queue) == total)
        print("published \(total) confirmed messages in \(elapsed)")

        let collector = DeliveryCollector()
        client.consume(queue: queue, prefetch: 300) { delivery in
            collector.add(delivery)
            client.ack(delivery.tag)
        }
        #expect(await collector.wait(for: total))
        let deliveries = collector.all
        #expect(Set(deliveries.compactMap(\.properties.messageID)).count == total)
        let first = try #require(deliveries.first { $0.properties.messageID == "m7" })
        #expect(first.body == Array("{\"n\":7}".utf8))
        #expect(first.properties.headers == headers)
        #expect(first.properties.persistent)
        #expect(first.properties.contentType == "application/json")
        #expect(first.properties.correlationID == "c7")
        #expect(first.properties.type == "job" && first.properties.appID == "tests")
        #expect(first.properties.timestamp == 1_700_000_000 && first.properties.expiration == "600000")
        #expect(first.routingKey == queue && first.exchange == "" && !first.redelivered)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await client.messageCount(queue: queue) == 0)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func nackRequeueRedelivers() async throws {
        let queue = Broker.uniqueName("requeue")
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)])
        try await client.publish(exchange: "", routingKey: queue, body: Array("again".utf8), properties: AMQPProperties())
        let collector = DeliveryCollector()
        client.consume(queue: queue, prefetch: 10) { delivery in
            collector.add(delivery)
            if delivery.redelivered {
                client.ack(delivery.tag)
            } else {
                client.nack(delivery.tag, requeue: true)
            }
        }
        #expect(await collector.wait(for: 2))
        let deliveries = collector.all
        #expect(deliveries.map(\.redelivered) == [false, true])
        #expect(deliveries.allSatisfy { $0.body == Array("again".utf8) })
        try await Task.sleep(for: .milliseconds(300))
        #expect(collector.count == 2)
        #expect(try await client.messageCount(queue: queue) == 0)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func nackWithoutRequeueDeadLetters() async throws {
        let queue = Broker.uniqueName("work")
        let deadLetterExchange = Broker.uniqueName("dlx")
        let deadLetterQueue = Broker.uniqueName("dlq")
        let client = try await Broker.connectedClient(topology: [
            .exchange(name: deadLetterExchange, type: "fanout"),
            .queue(name: deadLetterQueue),
            .binding(queue: deadLetterQueue, exchange: deadLetterExchange, routingKey: ""),
            .queue(name: queue, arguments: ["x-dead-letter-exchange": .string(deadLetterExchange)]),
        ])
        try await client.publish(exchange: "", routingKey: queue, body: Array("poison".utf8),
                                 properties: AMQPProperties(messageID: "p1"))
        let collector = DeliveryCollector()
        client.consume(queue: queue, prefetch: 1) { delivery in
            collector.add(delivery)
            client.nack(delivery.tag, requeue: false)
        }
        #expect(await collector.wait(for: 1))
        var deadLettered: AMQPDelivery?
        #expect(await eventuallyAsync { deadLettered = try? await client.get(queue: deadLetterQueue); return deadLettered != nil })
        let message = try #require(deadLettered)
        #expect(message.body == Array("poison".utf8))
        #expect(message.properties.messageID == "p1")
        guard case .array(let deaths) = message.properties.headers["x-death"], case .table(let death) = deaths.first else {
            Issue.record("x-death missing: \(message.properties.headers)")
            return
        }
        #expect(death["reason"] == "rejected")
        #expect(death["queue"] == .string(queue))
        #expect(death["count"] == .int(1))
        #expect(try await client.get(queue: deadLetterQueue) == nil)
        try await client.deleteQueue(queue)
        try await client.deleteQueue(deadLetterQueue)
        await client.shutdown()
    }

    @Test func prefetchIsHonoured() async throws {
        let queue = Broker.uniqueName("prefetch")
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)])
        for index in 0..<20 {
            client.publish(exchange: "", routingKey: queue, body: [UInt8(index)], properties: AMQPProperties()) { _ in }
        }
        try await client.publish(exchange: "", routingKey: queue, body: [99], properties: AMQPProperties())
        let collector = DeliveryCollector()
        client.consume(queue: queue, prefetch: 5) { delivery in collector.add(delivery) }
        #expect(await collector.wait(for: 5))
        try await Task.sleep(for: .seconds(1))
        #expect(collector.count == 5)
        // Acking one frees exactly one slot.
        client.ack(collector.all[0].tag)
        #expect(await collector.wait(for: 6))
        try await Task.sleep(for: .milliseconds(500))
        #expect(collector.count == 6)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func mandatoryUnroutablePublishFails() async throws {
        let queue = Broker.uniqueName("routable")
        let exchange = Broker.uniqueName("direct")
        let client = try await Broker.connectedClient(topology: [
            .exchange(name: exchange, type: "direct"), .queue(name: queue),
            .binding(queue: queue, exchange: exchange, routingKey: "yes"),
        ])
        // Interleaved routable and unroutable mandatory publishes: only the unroutable ones fail.
        let results = NIOLockedValueBox<[Int: String]>([:])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = NIOLockedValueBox(20)
            for index in 0..<20 {
                let key = index % 2 == 0 ? "yes" : "no"
                client.publish(exchange: exchange, routingKey: key, body: [UInt8(index)],
                               properties: AMQPProperties(messageID: "\(index)"), mandatory: true) { result in
                    results.withLockedValue { state in
                        switch result {
                        case .success: state[index] = "ok"
                        case .failure(let error): state[index] = "\(error.code)"
                        }
                    }
                    if remaining.withLockedValue({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }
            }
        }
        let outcome = results.withLockedValue { $0 }
        for index in 0..<20 {
            #expect(outcome[index] == (index % 2 == 0 ? "ok" : "unroutable"), "publish \(index)")
        }
        do {
            try await client.publish(exchange: exchange, routingKey: "nowhere", body: [1], properties: AMQPProperties(), mandatory: true)
            Issue.record("unroutable publish succeeded")
        } catch {
            #expect(error.code == .unroutable && error.status == 312)
        }
        // Without mandatory the broker confirms (and drops) it.
        try await client.publish(exchange: exchange, routingKey: "nowhere", body: [1], properties: AMQPProperties())
        #expect(try await client.messageCount(queue: queue) == 10)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func deletedQueueCancelsConsumer() async throws {
        let queue = Broker.uniqueName("cancel")
        let events = EventRecorder()
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)], events: events)
        try await client.publish(exchange: "", routingKey: queue, body: [1], properties: AMQPProperties())
        let collector = DeliveryCollector()
        client.consume(queue: queue, prefetch: 1) { delivery in collector.add(delivery) }
        #expect(await collector.wait(for: 1))
        try await client.deleteQueue(queue)
        #expect(await eventually { events.cancelledQueues == [queue] })
        #expect(events.disconnects == 0)
        #expect(client.isConnected)
        await client.shutdown()
    }

    @Test func reconnectsAfterForcedCloseAndRedelivers() async throws {
        let queue = Broker.uniqueName("reconnect")
        let events = EventRecorder()
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)], events: events)
        for index in 0..<3 {
            try await client.publish(exchange: "", routingKey: queue, body: [UInt8(index)], properties: AMQPProperties())
        }
        let collector = DeliveryCollector()
        client.consume(queue: queue, prefetch: 10) { delivery in collector.add(delivery) }  // no acks yet
        #expect(await collector.wait(for: 3))
        let oldTags = collector.all.map(\.tag)
        #expect(oldTags.allSatisfy { $0.connectionGeneration == 1 })

        try Broker.forceClose(connectionName: events.connectionName)
        #expect(await eventually { events.disconnects == 1 })
        #expect(await eventually { events.connectedGenerations == [1, 2] })
        try await client.waitUntilConnected(timeout: .seconds(10))

        // Re-consumed on the new connection: the three unacked messages come back.
        #expect(await collector.wait(for: 6))
        let redelivered = collector.all.dropFirst(3)
        #expect(redelivered.allSatisfy { $0.redelivered && $0.tag.connectionGeneration == 2 })
        #expect(Set(redelivered.map(\.body)) == [[0], [1], [2]])

        // Old-generation tags are dropped, not sent (that would be a 406 channel error).
        for tag in oldTags { client.ack(tag) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(events.disconnects == 1)
        #expect(try await client.messageCount(queue: queue) == 0)  // still unacked, not ready
        for delivery in redelivered { client.ack(delivery.tag) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.disconnects == 1)
        try await client.deleteQueue(queue)
        await client.shutdown()
        #expect(collector.count == 6)
    }

    @Test func tenMebibyteBodyRoundTrips() async throws {
        let queue = Broker.uniqueName("large")
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)])
        let body = (0..<(10 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        try await client.publish(exchange: "", routingKey: queue, body: body, properties: AMQPProperties(messageID: "big"))
        try await client.publish(exchange: "", routingKey: queue, body: body, properties: AMQPProperties(messageID: "big2"))
        let fetched = try #require(try await client.get(queue: queue))
        #expect(fetched.body == body)
        let collector = DeliveryCollector()
        client.consume(queue: queue, prefetch: 1) { delivery in
            collector.add(delivery)
            client.ack(delivery.tag)
        }
        #expect(await collector.wait(for: 1))
        #expect(collector.all.first?.body == body)
        #expect(collector.all.first?.properties.messageID == "big2")
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func heartbeatsKeepAnIdleConnectionUp() async throws {
        let events = EventRecorder()
        let client = try await Broker.connectedClient(heartbeat: 1, events: events)
        try await Task.sleep(for: .seconds(5))
        #expect(events.disconnects == 0)
        #expect(client.isConnected)
        let queue = Broker.uniqueName("heartbeat")
        try await client.declare([.queue(name: queue, durable: false)])
        try await client.deleteQueue(queue)
        #expect(events.connectedGenerations == [1])
        await client.shutdown()
    }

    /// RSS is the whole test process's, and other suites run meanwhile: a growth over the bound
    /// is measured again over fresh deliveries, twice at most. A leak in the consumer grows in
    /// every round; another test's allocations do not repeat with ours.
    @Test func memoryStaysFlatWhileConsuming() async throws {
        let queue = Broker.uniqueName("memory")
        let client = try await Broker.connectedClient(topology: [.queue(name: queue, durable: false)])
        let warmUp = 5_000
        let perRound = 45_000
        let body = [UInt8](repeating: 7, count: 512)
        let properties = AMQPProperties(messageID: "m", headers: ["job": "x", "n": 1], persistent: false)
        try await publishAll(client, count: warmUp + perRound, queue: queue, body: body, properties: properties)

        let collector = DeliveryCollector(keepBodies: false)
        client.consume(queue: queue, prefetch: 200) { delivery in
            collector.add(delivery)
            client.ack(delivery.tag)
        }
        #expect(await collector.wait(for: warmUp, timeout: .seconds(60)))
        var growths: [Int] = []
        for round in 1...3 {
            if round > 1 { try await publishAll(client, count: perRound, queue: queue, body: body, properties: properties) }
            let baseline = Broker.residentBytes()
            #expect(await collector.wait(for: warmUp + round * perRound, timeout: .seconds(120)))
            growths.append(Broker.residentBytes() - baseline)
            print("RSS growth over \(perRound) deliveries (round \(round)): \(growths.last! / 1024) KiB")
            if growths.last! < 8 * 1024 * 1024 { break }
        }
        #expect(growths.last! < 8 * 1024 * 1024, "RSS grew in every round: \(growths.map { "\($0 / 1024) KiB" })")
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func publishFailsAfterShutdown() async throws {
        let client = try await Broker.connectedClient()
        await client.shutdown()
        #expect(!client.isConnected)
        do {
            try await client.publish(exchange: "", routingKey: "x", body: [], properties: AMQPProperties())
            Issue.record("publish after shutdown succeeded")
        } catch {
            #expect(error.code == .shutdown)
        }
    }

    @Test func wrongPasswordIsReported() async throws {
        let endpoint = try AMQPConfiguration(url: Broker.url).endpoint()
        var configuration = AMQPConfiguration(url: "amqp://\(endpoint.user):wrong-password@\(endpoint.host):\(endpoint.port)/")
        configuration.reconnectDelay = .milliseconds(100) ... .milliseconds(200)
        let client = AMQPClient(configuration: configuration, topology: [], logger: Broker.logger)
        client.start()
        do {
            // Never connects: the wait always ends at its deadline, long enough on a loaded machine
            // for the first refused login to be the error it reports.
            try await client.waitUntilConnected(timeout: .seconds(10))
            Issue.record("connected with a wrong password")
        } catch {
            #expect(error.code == .timeout)
            #expect(error.message.contains("authenticationFailed"))
        }
        await client.shutdown()
    }

    @Test func publishToMissingExchangeFailsAndChannelRecovers() async throws {
        let queue = Broker.uniqueName("after-404")
        let events = EventRecorder()
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)], events: events)
        do {
            try await client.publish(exchange: Broker.uniqueName("no-such-exchange"), routingKey: "k", body: [1],
                                     properties: AMQPProperties())
            Issue.record("publish to a missing exchange succeeded")
        } catch {
            #expect(error.code == .channelClosed && error.status == 404)
        }
        // The publish channel was reopened in place: same connection, confirms numbered afresh.
        for _ in 0..<3 {
            try await client.publish(exchange: "", routingKey: queue, body: [2], properties: AMQPProperties())
        }
        #expect(try await client.messageCount(queue: queue) == 3)
        #expect(events.disconnects == 0)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func connectionLossFailsOutstandingPublishesButLosesNoConfirmedOne() async throws {
        let queue = Broker.uniqueName("in-flight")
        let events = EventRecorder()
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)], events: events)
        let tally = NIOLockedValueBox((sent: 0, confirmed: 0, lost: 0, other: 0))
        let publisher = Task {
            // Keep a steady stream of publishes in flight until the connection has been cut.
            while events.disconnects == 0 && !Task.isCancelled {
                for _ in 0..<200 {
                    tally.withLockedValue { $0.sent += 1 }
                    client.publish(exchange: "", routingKey: queue, body: [UInt8](repeating: 1, count: 256),
                                   properties: AMQPProperties()) { result in
                        tally.withLockedValue { state in
                            switch result {
                            case .success: state.confirmed += 1
                            case .failure(let error) where error.code == .connectionLost: state.lost += 1
                            case .failure: state.other += 1
                            }
                        }
                    }
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        try Broker.forceClose(connectionName: events.connectionName)
        #expect(await eventually { events.disconnects == 1 })
        publisher.cancel()
        _ = await publisher.value
        #expect(await eventually { tally.withLockedValue { $0.sent == $0.confirmed + $0.lost + $0.other } })
        try await client.waitUntilConnected(timeout: .seconds(10))
        let result = tally.withLockedValue { $0 }
        print("in-flight publishes at connection loss: \(result)")
        #expect(result.lost > 0)
        // Confirmed means stored: the queue holds at least every confirmed message.
        let stored = try await client.messageCount(queue: queue)
        #expect(stored >= result.confirmed)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }

    @Test func tlsHandshakeFailureIsReportedNotFatal() async throws {
        let endpoint = try AMQPConfiguration(url: Broker.url).endpoint()
        // The plain AMQP port does not speak TLS: the handshake must fail cleanly and be retried.
        var configuration = AMQPConfiguration(url: "amqps://guest:guest@\(endpoint.host):\(endpoint.port)/")
        configuration.connectTimeout = .seconds(2)
        let client = AMQPClient(configuration: configuration, topology: [], logger: Broker.logger)
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
            Issue.record("TLS to a plain port connected")
        } catch {
            #expect(error.code == .timeout)
            #expect(error.message.contains("connectFailed"))
        }
        await client.shutdown()
    }

    private func publishAll(
        _ client: AMQPClient, count: Int, queue: String, body: [UInt8], properties: AMQPProperties
    ) async throws {
        let failures = NIOLockedValueBox(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = NIOLockedValueBox(count)
            for _ in 0..<count {
                client.publish(exchange: "", routingKey: queue, body: body, properties: properties) { result in
                    if case .failure = result { failures.withLockedValue { $0 += 1 } }
                    if remaining.withLockedValue({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }
            }
        }
        #expect(failures.withLockedValue { $0 } == 0)
    }
}

func eventuallyAsync(timeout: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while await !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return true
}
