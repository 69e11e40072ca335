import ArgumentParser
import Logging
import PushworkerClient

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
        let amqp = connection.amqpConfiguration(name: "pushworker")
        // The library names a subscription's connection "<name>-events": pushworker-events, as before.
        let client = PushworkerClient(configuration: .init(amqpURL: amqp.url, caFile: amqp.caFile, resultsExchange: resultsExchange,
                                                           connectionName: amqp.connectionName, declaresJobQueue: false,
                                                           queueType: try connection.parsedQueueType() ?? .classic),
                                      logger: Logger(label: "pushworker.events"))
        // Declared as the worker declares them, so reading works before any worker ran; the
        // private queue is removed when we leave (or by RabbitMQ 60 s later).
        let events: PushworkerEvents
        do {
            events = unrouted ? try await client.unroutedEvents() : try await client.events(for: nil, pattern: pattern)
        } catch {
            await client.shutdown()
            throw error
        }
        await withTaskGroup(of: Void.self) { group in
            if seconds > 0 {
                // Ends the loop below; cancelled (and awaited) once the loop ends first.
                group.addTask { [seconds] in
                    guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }
                    await events.cancel()
                }
            }
            var received = 0
            for await event in events {
                print("\(event.routingKey) \(event.text)")
                received += 1
                if count > 0, received >= count { break }
            }
            group.cancelAll()
        }
        await events.cancel()
        await client.shutdown()
    }
}
