@testable import AMQP
import Testing

@Suite struct EndpointListTests {
    @Test func wholeURLsSeparatedByCommas() throws {
        let endpoints = try AMQPConfiguration(url: "amqp://a:pw@n1:5672/prod,amqps://b:pw2@n2/%2f").endpoints()
        #expect(endpoints == [
            AMQPEndpoint(host: "n1", port: 5672, user: "a", password: "pw", vhost: "prod", tls: false),
            AMQPEndpoint(host: "n2", port: 5671, user: "b", password: "pw2", vhost: "/", tls: true),
        ])
    }

    @Test func hostListSharesCredentialsAndVhost() throws {
        let endpoints = try AMQPConfiguration(url: "amqp://u%2Cx:p%40w@h1:5673,h2,[::1]:5999/v").endpoints()
        #expect(endpoints.map(\.host) == ["h1", "h2", "::1"])
        #expect(endpoints.map(\.port) == [5673, 5672, 5999])
        #expect(endpoints.allSatisfy { $0.user == "u,x" && $0.password == "p@w" && $0.vhost == "v" && !$0.tls })
        #expect(try AMQPConfiguration(url: "amqp://h1,h2").endpoints().map(\.host) == ["h1", "h2"])
    }

    @Test func oneNodeIsAListOfOne() throws {
        #expect(try AMQPConfiguration(url: "amqp://h/").endpoints().count == 1)
    }

    @Test(arguments: [
        ("amqp://h1,,h2/", "host 2 of 3 is empty"),
        ("amqp://h1,/", "host 2 of 2 is empty"),
        ("amqp://h1/,h2", "comma after the host part"),
        ("amqp://h1/,http://h2/", "URL 2 of 2"),
        ("h1,h2", "needs a scheme"),
        ("amqp://h1,h2:bad/", "host 2 of 2"),
    ])
    func refusesBadLists(url: String, expected: String) {
        #expect {
            try AMQPConfiguration(url: url).endpoints()
        } throws: { error in
            guard let error = error as? AMQPError else { return false }
            return error.code == .invalidURL && error.message.contains(expected)
        }
    }

    @Test func messagesNeverEchoThePassword() {
        do {
            _ = try AMQPConfiguration(url: "amqp://u:topsecret@h1,h2:bad/").endpoints()
            Issue.record("a bad port was accepted")
        } catch {
            #expect(!error.message.contains("topsecret"))
        }
    }
}

@Suite struct EndpointRotationTests {
    static let nodes = (1...3).map { AMQPEndpoint(host: "n\($0)", port: 5672, user: "guest", password: "guest", vhost: "/", tls: false) }

    /// Deterministic: the same seed gives the same order.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func failuresVisitEveryNodeInTurnThenWrap() {
        var generator = SeededGenerator(state: 7)
        var rotation = EndpointRotation(Self.nodes, generator: &generator)
        var visited: [String] = []
        for _ in 0..<6 {
            visited.append(rotation.current.host)
            rotation.failed()
        }
        #expect(Set(visited.prefix(3)) == Set(["n1", "n2", "n3"]))
        #expect(Array(visited.suffix(3)) == Array(visited.prefix(3)))
    }

    @Test func aFleetSpreadsOverTheNodes() {
        var firstNodes: [String: Int] = [:]
        for seed in 0..<300 {
            var generator = SeededGenerator(state: UInt64(seed))
            firstNodes[EndpointRotation(Self.nodes, generator: &generator).current.host, default: 0] += 1
        }
        // 300 workers: each node is the first choice of a fair share (100 expected; far from 0 or 300).
        #expect(firstNodes.count == 3)
        #expect(firstNodes.values.allSatisfy { $0 >= 60 })
    }

    @Test func oneNodeStaysPut() {
        var rotation = EndpointRotation([Self.nodes[0]])
        rotation.failed()
        #expect(rotation.current == Self.nodes[0])
    }
}

/// Against the real RabbitMQ (AMQP_URL).
@Suite struct EndpointFailoverBrokerTests {
    /// A URL listing a node that refuses connections and the real broker connects whichever
    /// order the shuffle chose: the refused node is left for the next.
    @Test func failsOverPastANodeThatIsDown() async throws {
        let live = Broker.url.hasSuffix("/") ? Broker.url : Broker.url + "/"
        let down = "amqp://guest:guest@127.0.0.1:1/"
        for url in ["\(down),\(live)", "\(live),\(down)", "\(down),\(down),\(live)"] {
            var configuration = AMQPConfiguration(url: url)
            configuration.reconnectDelay = .milliseconds(10) ... .milliseconds(50)
            let client = AMQPClient(configuration: configuration, topology: [], logger: Broker.logger)
            client.start()
            do {
                try await client.waitUntilConnected(timeout: .seconds(20))
            } catch {
                Issue.record("no connection through a list with a node down: \(error)")
            }
            await client.shutdown()
        }
    }
}

/// Against the real RabbitMQ: a renewed publish channel confirms publishes again.
@Suite struct PublishChannelRenewalBrokerTests {
    @Test func publishesAreConfirmedOnTheRenewedChannel() async throws {
        let queue = Broker.uniqueName("renewal")
        let client = try await Broker.connectedClient(topology: [.queue(name: queue)])
        try await client.publish(exchange: "", routingKey: queue, body: [1], properties: AMQPProperties(), mandatory: true)
        try await client.renewPublishChannel()
        try await client.publish(exchange: "", routingKey: queue, body: [2], properties: AMQPProperties(), mandatory: true)
        try await client.renewPublishChannel()
        try await client.publish(exchange: "", routingKey: queue, body: [3], properties: AMQPProperties(), mandatory: true)
        #expect(try await client.messageCount(queue: queue) == 3)
        #expect(client.isConnected)
        try await client.deleteQueue(queue)
        await client.shutdown()
    }
}
