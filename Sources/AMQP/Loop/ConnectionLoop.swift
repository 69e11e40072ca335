import Logging
import PushCore

/// The body of the AMQP owner thread: connects, services the connection and reconnects.
/// Everything here runs on that one thread, so nothing in it is shared or locked.
final class ConnectionLoop {
    static let consumeChannel: UInt16 = 1
    static let publishChannel: UInt16 = 2
    static let adminChannel: UInt16 = 3
    /// Frames read before looking at the command queue again, so acks and publishes keep flowing
    /// while deliveries pour in.
    static let framesPerIteration = 256
    /// Commands executed before reading frames again.
    static let commandsPerIteration = 2048
    /// Longest an ack waits to be sent with others (see `acksDue`).
    static let ackDelay = Duration.milliseconds(2)
    static let ackBatch = 256
    /// Longest an ack waits for the deliveries before it (see `acksDue`).
    static let ackHoldLimit = Duration.milliseconds(100)
    /// Longest buffered frames wait for more before they are written, when the loop has nothing
    /// else to do (see `iterate`).
    static let writeCoalescing = Duration.milliseconds(1)

    struct Consumer {
        let queue: String
        let prefetch: UInt16
        let maxBodyBytes: Int
        let handler: @Sendable (AMQPDelivery) -> Void
        /// False after stopConsuming() or a server cancel: not restarted on reconnect, but its
        /// in-flight deliveries still reach the handler.
        var active: Bool
    }

    let client: AMQPClient
    var logger: Logger
    var connection: AMQPConnection?
    var generation: UInt64 = 0
    var topology: [AMQPDeclaration]
    var consumers = ConsumerTable()
    var confirms = PublishConfirms()
    /// Since when publishes have waited for a confirm without any arriving (nil: none waits).
    var confirmsWaitingSince: ContinuousClock.Instant?
    /// A broker that confirms nothing for this long is treated as gone: the connection is
    /// dropped and made again, so no job waits forever for a confirm (and holds its slot).
    static let confirmTimeout = Duration.seconds(60)
    var unacked = UnackedDeliveries()
    /// Single acks not yet sent, in the order they were asked for; since when the oldest waits.
    var pendingAcks: [UInt64] = []
    var pendingAcksSince: ContinuousClock.Instant?
    /// Whether `pendingAcks` holds the oldest unacked delivery (then they can start with a `multiple`).
    var pendingAcksIncludeOldest = false
    /// When frames were first left buffered for `writeCoalescing`.
    var framesBufferedSince: ContinuousClock.Instant?
    /// Of the active consumers (0, unlimited, counts as no limit): acks must not hold back more
    /// than half of it.
    var smallestPrefetch: Int {
        var smallest = Int.max
        for consumer in consumers.values where consumer.active && consumer.prefetch > 0 {
            smallest = min(smallest, Int(consumer.prefetch))
        }
        return smallest
    }
    /// connection.blocked from the broker: publishes wait here instead of blocking the thread in send().
    var blocked = false
    var heldPublishes: [PublishRequest] = []
    var backoff: Backoff
    var reconnectAt = ContinuousClock.now

    init(client: AMQPClient) {
        self.client = client
        self.logger = client.logger
        self.topology = client.initialTopology
        self.backoff = Backoff(range: client.configuration.reconnectDelay)
    }

    func run() {
        let endpoint: AMQPEndpoint
        do {
            endpoint = try client.configuration.endpoint()
        } catch {
            logger.error("AMQP client cannot start", metadata: [LogKeys.error: "\(error)"])
            client.markUnusable(error)
            idleUntilStopped(error)
            client.markStopped()
            return
        }
        logger[metadataKey: "amqp.endpoint"] = "\(endpoint)"

        while !client.isStopping {
            if let connection {
                do {
                    try iterate(connection)
                } catch {
                    lose(connection, error)
                }
            } else if ContinuousClock.now < reconnectAt {
                pauseDisconnected(until: reconnectAt)
            } else if !connect(endpoint) {
                let delay = backoff.next()
                reconnectAt = .now + delay
                logger.debug("AMQP reconnect scheduled", metadata: [LogKeys.reconnectIn: "\(delay)"])
            }
        }
        stop()
    }

    /// One pass: queued commands, then up to `framesPerIteration` frames, then wait for activity.
    private func iterate(_ connection: AMQPConnection) throws(AMQPError) {
        let (commands, moreCommands) = client.takeCommands(limit: Self.commandsPerIteration)
        if !commands.isEmpty { try perform(commands, on: connection) }

        var drained = false
        for _ in 0..<Self.framesPerIteration {
            // A delivery for a consumer no longer known is requeued unread: its body is not kept.
            guard let frame = try connection.readFrame(bodyLimit: { consumers[$0]?.maxBodyBytes ?? 0 }) else {
                drained = true
                break
            }
            try handle(frame, on: connection)
        }
        if let flush = acksDue() { try flushAcks(on: connection, holdingGaps: flush == .oldestRun) }
        try checkConfirmTimeout()
        // Only poll once the library reported nothing buffered (poll() cannot see its buffers)
        // and no commands are left over (they would not signal the wake-up again).
        let idle = drained && !moreCommands
        // An idle loop lets a few publishes and acks wait up to `writeCoalescing` for more, so
        // the broker reads them in one go: at one-token-job rates, a write per wake-up kept it
        // handling a few frames at a time.
        if idle, connection.hasBufferedFrames, framesBufferedSince.map({ ContinuousClock.now - $0 < Self.writeCoalescing }) ?? true {
            if framesBufferedSince == nil { framesBufferedSince = .now }
        } else {
            // The commands' publishes and acks, and what frame handling added (publishes held while
            // the broker blocked us). Order is kept below: every method rabbitmq-c writes itself
            // (close-ok, channel.open, consume…) is preceded by a flush in `AMQPConnection`.
            try connection.flushFrames()
            framesBufferedSince = nil
        }
        connection.releaseBuffers()
        if idle {
            var timeout = pollTimeout(connection)
            if let acksDue = millisecondsUntilAcksDue() { timeout = min(timeout, acksDue) }
            if framesBufferedSince != nil { timeout = min(timeout, 1) }
            client.waitForWork(socket: connection.socketDescriptor, timeoutMilliseconds: timeout)
        }
    }

    /// Well under the heartbeat, because heartbeats are only sent from inside library calls.
    private func pollTimeout(_ connection: AMQPConnection) -> Int32 {
        guard connection.heartbeat > 0 else { return 500 }
        return Int32(min(500, max(10, connection.heartbeat * 1000 / 4)))
    }

    private func connect(_ endpoint: AMQPEndpoint) -> Bool {
        do throws(AMQPError) {
            let connection = try AMQPConnection(
                endpoint: endpoint, configuration: client.configuration,
                channels: [Self.consumeChannel, Self.publishChannel, Self.adminChannel],
                confirmChannels: [Self.publishChannel])
            do throws(AMQPError) {
                confirms = PublishConfirms()
                confirmsWaitingSince = nil
                unacked.reset()
                pendingAcks.removeAll()
                pendingAcksSince = nil
                pendingAcksIncludeOldest = false
                blocked = false
                try declare(topology, on: connection)
                for tag in consumers.tags where consumers[tag]?.active == true {
                    try startConsumer(tag, on: connection)
                }
            } catch {
                connection.close()
                throw error
            }
            // Counted only for connections that came up, so generations run 1, 2, 3…; no
            // delivery reaches a handler before this point.
            generation += 1
            self.connection = connection
            backoff.reset()
            client.markConnected(generation: generation)
            logger.info("AMQP connected", metadata: [
                LogKeys.generation: "\(generation)", LogKeys.heartbeat: "\(connection.heartbeat)",
            ])
            client.onEvent(.connected(generation: generation))
            return true
        } catch {
            client.markDisconnected(error)
            logger.warning("AMQP connect failed", metadata: [LogKeys.error: "\(error)"])
            return false
        }
    }

    /// Drops a failed connection: outstanding publishes fail (they may or may not have been
    /// stored: the caller must treat them as not published), unacked deliveries are forgotten
    /// (the broker requeues them), and a reconnect is scheduled.
    func lose(_ connection: AMQPConnection, _ error: AMQPError) {
        self.connection = nil
        connection.close()  // no-op when already broken
        let lost = AMQPError(code: .connectionLost, status: error.status,
                             message: "connection lost before the broker confirmed: \(error.message)")
        complete(confirms.reset(failingWith: lost))
        confirmsWaitingSince = nil
        failHeldPublishes(lost)
        unacked.reset()
        pendingAcks.removeAll()
        pendingAcksSince = nil
        pendingAcksIncludeOldest = false
        blocked = false
        client.markDisconnected(error)
        let delay = backoff.next()
        reconnectAt = .now + delay
        logger.warning("AMQP connection lost", metadata: [LogKeys.error: "\(error)", LogKeys.reconnectIn: "\(delay)"])
        client.onEvent(.disconnected(reason: error.description))
    }

    /// Waits for the next reconnect attempt while answering commands that cannot wait.
    private func pauseDisconnected(until deadline: ContinuousClock.Instant) {
        let remaining = deadline - .now
        let milliseconds = max(1, min(500, Int32(Backoff.seconds(remaining) * 1000)))
        client.waitForWork(socket: -1, timeoutMilliseconds: milliseconds)
        let lastError = client.shared.withLockedValue { $0.lastError }
        handleWhileDisconnected(client.takeCommands(), reason: lastError)
    }

    private func idleUntilStopped(_ error: AMQPError) {
        while !client.isStopping {
            client.waitForWork(socket: -1, timeoutMilliseconds: 500)
            handleWhileDisconnected(client.takeCommands(), reason: error)
        }
    }

    /// Publishes and RPCs fail at once (waiting for a reconnect could take arbitrarily long);
    /// consumer changes are remembered for the next connection; acks are moot (requeued).
    private func handleWhileDisconnected(_ commands: [ClientCommand], reason: AMQPError?) {
        let error = AMQPError(code: reason?.code == .invalidURL ? .invalidURL : .connectionLost, status: reason?.status,
                              message: "not connected to the broker" + (reason.map { ": \($0.message)" } ?? ""))
        for command in commands {
            switch command {
            case .publish, .admin:
                command.fail(with: error)
            case .ack(let tag, _), .nack(let tag, _, _):
                logger.debug("AMQP ack dropped while disconnected", metadata: [LogKeys.tag: "\(tag)"])
            case .consume(let queue, let prefetch, let maxBodyBytes, let handler):
                addConsumer(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, handler: handler)
            case .stopConsuming:
                for tag in consumers.tags { consumers[tag]?.active = false }
            }
        }
    }

    /// Graceful end: settle acks the application already decided, cancel consumers, close.
    private func stop() {
        let shutdownError = AMQPError(code: .shutdown, message: "client was shut down")
        if let connection, !connection.isBroken {
            do {
                var acks: [ClientCommand] = []
                for command in client.takeCommands() {
                    switch command {
                    case .ack, .nack: acks.append(command)
                    default: command.fail(with: shutdownError)
                    }
                }
                try perform(acks, on: connection)
                try flushAcks(on: connection)
                try connection.flushFrames()
                for tag in consumers.tags where consumers[tag]?.active == true {
                    try connection.cancel(channel: Self.consumeChannel, consumerTag: tag)
                    consumers[tag]?.active = false
                }
            } catch {
                logger.debug("AMQP error during shutdown", metadata: [LogKeys.error: "\(error)"])
            }
            connection.close()
        }
        connection = nil
        complete(confirms.reset(failingWith: shutdownError))
        failHeldPublishes(shutdownError)
        logger.info("AMQP client stopped")
        client.markStopped()
    }

    func complete(_ settled: [(PublishConfirms.Completion, Result<Void, AMQPError>)]) {
        for (completion, result) in settled { completion(result) }
    }

    func failHeldPublishes(_ error: AMQPError) {
        let held = heldPublishes
        heldPublishes = []
        for request in held { request.completion(.failure(error)) }
    }
}
