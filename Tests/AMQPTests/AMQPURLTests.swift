import AMQP
import Testing

@Suite struct AMQPURLTests {
    @Test func parsesAllParts() throws {
        let endpoint = try AMQPConfiguration(url: "amqp://alice:s3cret@broker.example:5673/jobs").endpoint()
        #expect(endpoint == AMQPEndpoint(host: "broker.example", port: 5673, user: "alice", password: "s3cret", vhost: "jobs", tls: false))
        #expect(!endpoint.description.contains("s3cret"))
    }

    @Test func defaultsAndVhostSpelling() throws {
        let plain = try AMQPConfiguration(url: "amqp://localhost").endpoint()
        #expect(plain == AMQPEndpoint(host: "localhost", port: 5672, user: "guest", password: "guest", vhost: "/", tls: false))
        #expect(try AMQPConfiguration(url: "amqp://h/").endpoint().vhost == "/")
        #expect(try AMQPConfiguration(url: "amqp://h/%2f").endpoint().vhost == "/")
        #expect(try AMQPConfiguration(url: "amqp://h/%2Fprod").endpoint().vhost == "/prod")
        let tls = try AMQPConfiguration(url: "amqps://u:p@h").endpoint()
        #expect(tls.tls && tls.port == 5671)
    }

    @Test func percentDecodesCredentials() throws {
        let endpoint = try AMQPConfiguration(url: "amqp://us%40er:p%3Ass%2Fw@[::1]:5999/v%20h").endpoint()
        #expect(endpoint.user == "us@er")
        #expect(endpoint.password == "p:ss/w")
        #expect(endpoint.host == "::1")
        #expect(endpoint.port == 5999)
        #expect(endpoint.vhost == "v h")
    }

    @Test(arguments: [
        ("http://h/", "scheme"),
        ("amqp://", "missing host"),
        ("amqp://user:pw@:5672/", "missing host"),
        ("amqp://h:notaport/", "port"),
        ("amqp://h:70000/", "port"),
        ("amqp://h/a/b", "%2f"),
        ("amqp://h/%zz", "percent-encoding"),
        ("amqp://h/?heartbeat=5", "query"),
        ("amqp://[::1/", "IPv6"),
    ])
    func rejectsBadURLs(url: String, expected: String) {
        #expect {
            try AMQPConfiguration(url: url).endpoint()
        } throws: { error in
            guard let error = error as? AMQPError else { return false }
            return error.code == .invalidURL && error.message.contains(expected)
        }
    }

    @Test func clientWithBadURLFailsFast() async {
        let client = AMQPClient(configuration: AMQPConfiguration(url: "amqp://h:bad/"), topology: [], logger: Broker.logger)
        client.start()
        await #expect(throws: AMQPError.self) {
            try await client.waitUntilConnected(timeout: .seconds(5))
        }
        do {
            try await client.waitUntilConnected(timeout: .seconds(5))
        } catch {
            #expect(error.code == .invalidURL)
        }
        await client.shutdown()
    }
}
