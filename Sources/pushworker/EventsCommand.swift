import AMQP
import ArgumentParser
import Foundation
import Logging
import Worker

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print events from push.results as they arrive (one JSON per line), like an application subscriber would.")

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Routing key pattern: token.invalid, delivery.failed, job.rejected, job.completed, or # for all.")
    var pattern: String = "#"
    @Option(help: "Results exchange name.") var resultsExchange: String = Env["results-exchange"] ?? "push.results"
    @Option(help: "Stop after this many events (0 = run until interrupted).") var count: Int = 0
    @Option(help: "Stop after this many seconds (0 = no limit).") var seconds: Int = 0
    @Flag(help: "Take the events that were published while no queue was bound (from <results-exchange>.unrouted; they are removed from it).")
    var unrouted = false

    func run() async throws {
        let queue: String
        let topology: [AMQPDeclaration]
        // Declared as the worker declares them, so reading works before any worker ran.
        let results = WorkerConfiguration.resultsTopology(resultsExchange: resultsExchange)
        if unrouted {
            queue = resultsExchange + ".unrouted"
            topology = results
        } else {
            // A private queue that RabbitMQ removes 60 s after we leave.
            queue = "push.results.tail.\(UUID().uuidString.prefix(8).lowercased())"
            topology = results + [
                .queue(name: queue, durable: false, arguments: ["x-expires": .int(60_000)]),
                .binding(queue: queue, exchange: resultsExchange, routingKey: pattern),
            ]
        }
        let amqp = AMQPClient(
            configuration: connection.amqpConfiguration(name: "pushworker-events"),
            topology: topology,
            logger: Logger(label: "pushworker.events"))
        amqp.start()
        try await amqp.waitUntilConnected(timeout: .seconds(10))
        let (stream, input) = AsyncStream.makeStream(of: AMQPDelivery.self)
        amqp.consume(queue: queue, prefetch: 100) { input.yield($0) }
        await withTaskGroup(of: Void.self) { group in
            if seconds > 0 {
                // Ends the loop below; cancelled (and awaited) once the loop ends first.
                group.addTask { try? await Task.sleep(for: .seconds(seconds)); input.finish() }
            }
            var received = 0
            for await delivery in stream {
                print("\(delivery.routingKey) \(String(decoding: delivery.body, as: UTF8.self))")
                amqp.ack(delivery.tag)
                received += 1
                if count > 0, received >= count { break }
            }
            group.cancelAll()
        }
        await amqp.shutdown()
    }
}
