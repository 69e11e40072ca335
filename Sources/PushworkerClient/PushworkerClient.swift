import AMQP
import Foundation
import Logging
import Synchronization

/// Publishes jobs to the Pushworker job queue and reads their events.
///
/// Subscribe before sending, so that no event of the job can come before the subscription:
///
/// ```swift
/// let client = PushworkerClient(configuration: .init(amqpURL: "amqp://guest:guest@127.0.0.1:5672/"))
/// let job = PushworkerJob.apns(APNsPayload(alert: .content(title: "Hello", body: "World")), tokens: [token])
/// let events = try await client.events(for: job.jobID)   // the queue is bound from here on
/// try await client.send(job)                             // returns once the broker confirmed
/// for await event in events {
///     print(event.routingKey, event.text)
///     if event.endsJob { break }
/// }
/// await events.cancel()
/// await client.shutdown()
/// ```
///
/// Jobs go over one connection, shared by every `send`; each `events` subscription has a
/// connection of its own (see `EventSubscription`). All methods may be called from any task.
public final class PushworkerClient: Sendable {
    public let configuration: Configuration
    let logger: Logger
    private let amqp: AMQPClient
    /// Open subscriptions, closed by `shutdown()`.
    private let subscriptions = Mutex<[ObjectIdentifier: EventSubscription]>([:])

    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "pushworker.client")) {
        self.configuration = configuration
        self.logger = logger
        amqp = AMQPClient(
            configuration: Self.amqpConfiguration(configuration, name: configuration.connectionName),
            topology: configuration.declaresJobQueue ? [ResultsTopology.jobQueue(configuration.jobQueue, type: configuration.queueType)] : [],
            logger: logger)
    }

    static func amqpConfiguration(_ configuration: Configuration, name: String) -> AMQPConfiguration {
        var amqp = AMQPConfiguration(url: configuration.amqpURL)
        amqp.caFile = configuration.caFile
        amqp.connectionName = name
        amqp.heartbeat = configuration.heartbeat
        return amqp
    }

    /// Starts connecting in the background (and reconnecting after a loss, until `shutdown()`).
    /// `send` starts the client itself.
    public func start() {
        amqp.start()
    }

    /// Starts the client and waits until it is connected.
    public func connect(timeout: Duration = .seconds(10)) async throws(PushworkerClientError) {
        amqp.start()
        do { try await amqp.waitUntilConnected(timeout: timeout) } catch { throw PushworkerClientError(error, queue: configuration.jobQueue) }
    }

    public var isConnected: Bool { amqp.isConnected }

    /// Closes the open subscriptions and the connection; pending sends fail with `.shutdown`.
    public func shutdown() async {
        let open = subscriptions.withLock { Array($0.values) }
        for subscription in open { await subscription.close() }
        await amqp.shutdown()
    }

    /// Publishes the job to the job queue and returns its id once the broker confirmed it:
    /// persistent, `content_type application/json`, `message_id` the job's id, mandatory (a
    /// missing queue is `.unroutable`, never a silent drop). `timeout` bounds connecting and the
    /// confirm together.
    @discardableResult
    public func send(_ job: PushworkerJob, timeout: Duration = .seconds(10)) async throws(PushworkerClientError) -> PushworkerJobID {
        let body: [UInt8]
        do { body = try job.json() } catch { throw .invalidJob(error) }
        try await publish(jobJSON: body, id: job.id, timeout: timeout)
        return job.jobID
    }

    /// The same confirmed publish for a body that is already a job's JSON (checked elsewhere,
    /// e.g. by a gateway with the worker's parser). `queue`: another queue than the configured
    /// one (the bulk lane `push.jobs.bulk`, say).
    public func publish(jobJSON: [UInt8], id: String, queue: String? = nil, timeout: Duration = .seconds(10)) async throws(PushworkerClientError) {
        let queue = queue ?? configuration.jobQueue
        let deadline = ContinuousClock.now + timeout
        amqp.start()
        if !amqp.isConnected {
            do { try await amqp.waitUntilConnected(timeout: timeout) } catch { throw PushworkerClientError(error, queue: queue) }
        }
        var properties = AMQPProperties(contentType: "application/json", messageID: id)
        properties.persistent = true
        let remaining = max(deadline - ContinuousClock.now, .zero)
        guard let result = await ConfirmedPublish.publish(amqp, routingKey: queue, body: jobJSON, properties: properties, timeout: remaining) else {
            throw .timeout(timeout)
        }
        do { try result.get() } catch { throw PushworkerClientError(error, queue: queue) }
    }

    /// Subscribes to the results exchange: a private queue (not durable, removed by the broker
    /// 60 s after it was last used) bound with `pattern`, declared before this returns, so every
    /// event published afterwards reaches it. With a `jobID`, only that job's events are handed out.
    public func events(for jobID: PushworkerJobID?, pattern: String = "#", timeout: Duration = .seconds(10)) async throws(PushworkerClientError) -> PushworkerEvents {
        let exchange = configuration.resultsExchange
        let queue = "\(exchange).tail.\(UUID().uuidString.prefix(13).lowercased())"
        let topology = ResultsTopology.declarations(resultsExchange: exchange, queueType: configuration.queueType) + [
            .queue(name: queue, durable: false, arguments: ["x-expires": .int(60_000)]),
            .binding(queue: queue, exchange: exchange, routingKey: pattern),
        ]
        return try await subscribe(queue: queue, topology: topology, deletesQueue: true, jobID: jobID, timeout: timeout)
    }

    /// The events published while no queue was bound to the results exchange (kept by its
    /// alternate exchange). Each one handed out is removed from that queue.
    public func unroutedEvents(timeout: Duration = .seconds(10)) async throws(PushworkerClientError) -> PushworkerEvents {
        let exchange = configuration.resultsExchange
        return try await subscribe(queue: ResultsTopology.unroutedQueue(resultsExchange: exchange),
                                   topology: ResultsTopology.declarations(resultsExchange: exchange, queueType: configuration.queueType),
                                   deletesQueue: false, jobID: nil, timeout: timeout)
    }

    private func subscribe(queue: String, topology: [AMQPDeclaration], deletesQueue: Bool, jobID: PushworkerJobID?,
                           timeout: Duration) async throws(PushworkerClientError) -> PushworkerEvents {
        let (stream, input) = AsyncStream.makeStream(of: AMQPDelivery.self)
        let connection = AMQPClient(
            configuration: Self.amqpConfiguration(configuration, name: configuration.connectionName + "-events"),
            topology: topology, logger: logger
        ) { event in
            // Its queue was deleted: no event will come any more.
            if case .consumerCancelledByServer(let cancelled) = event, cancelled == queue { input.finish() }
        }
        connection.start()
        do { try await connection.waitUntilConnected(timeout: timeout) } catch {
            await connection.shutdown()
            throw PushworkerClientError(error, queue: queue)
        }
        let subscription = EventSubscription(amqp: connection, queue: queue, deletesQueue: deletesQueue, input: input) { [weak self] closed in
            _ = self?.subscriptions.withLock { $0.removeValue(forKey: ObjectIdentifier(closed)) }
        }
        subscriptions.withLock { $0[ObjectIdentifier(subscription)] = subscription }
        // The iterating task was cancelled: close, without keeping the subscription alive.
        input.onTermination = { [weak subscription] _ in
            guard let subscription else { return }
            Task { await subscription.close() }
        }
        connection.consume(queue: queue, prefetch: 100) { input.yield($0) }
        return PushworkerEvents(subscription: subscription, stream: stream, jobID: jobID)
    }
}
