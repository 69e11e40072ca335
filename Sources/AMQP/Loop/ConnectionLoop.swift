import Logging
import PushCore

/// The body of the AMQP owner thread: connects, services the connection and reconnects.
/// Everything here runs on that one thread, so nothing in it is shared or locked. What to do and
/// when is `ConnectionPolicy`'s; this type does the I/O it asks for.
final class ConnectionLoop {
    static let consumeChannel: UInt16 = 1
    static let publishChannel: UInt16 = 2
    static let adminChannel: UInt16 = 3
    /// Frames read before looking at the command queue again, so acks and publishes keep flowing
    /// while deliveries pour in.
    static let framesPerIteration = 256
    /// Commands executed before reading frames again.
    static let commandsPerIteration = 2048

    struct Consumer {
        let queue: String
        let prefetch: UInt16
        let maxBodyBytes: Int
        /// Asked per delivery: the most body bytes the application has room for now.
        let bodyRoom: (@Sendable () -> Int)?
        let handler: @Sendable (AMQPDelivery) -> Void
        /// False after stopConsuming(), a server cancel or a refused consume: not restarted on
        /// reconnect, but its in-flight deliveries still reach the handler.
        var wanted: Bool
        /// What the broker runs for this tag on the current connection.
        var atBroker: AtBroker = .none
        /// The tag the broker knows this consumer by now: a fresh one per basic.consume
        /// (`ConsumerTable.starting`); nil until the first.
        var wireTag: String?

        enum AtBroker: Equatable {
            case none
            /// basic.qos and basic.consume sent, the consume-ok not yet read. `thenCancel`: a stop or
            /// retune came meanwhile; the cancel goes out on the consume-ok (RabbitMQ's channel
            /// crashes, `badkey` in `consumer_monitor`, on a cancel of a consume it has not answered).
            case starting(prefetch: UInt16, thenCancel: Bool = false)
            case consuming(prefetch: UInt16)
            /// basic.cancel sent, its cancel-ok not yet read: deliveries still arrive.
            case cancelling(prefetch: UInt16)

            var cancelSent: AtBroker {
                switch self {
                case .starting(let prefetch, _): .starting(prefetch: prefetch, thenCancel: true)
                case .consuming(let prefetch), .cancelling(let prefetch): .cancelling(prefetch: prefetch)
                case .none: .none
                }
            }
        }

        /// The largest body of the next delivery to read whole; a larger one is read past and
        /// only its start kept (`AMQPDelivery.discardedBodySize`).
        var bodyLimit: Int { min(maxBodyBytes, bodyRoom?() ?? .max) }
    }

    let client: AMQPClient
    var logger: Logger
    var connection: AMQPConnection?
    /// UInt64: one per connection made, never near its end.
    var generation: UInt64 = 0
    var topology: [AMQPDeclaration]
    var consumers = ConsumerTable()
    /// Admin requests that arrived while a basic.cancel was in flight, in order.
    var adminAfterCancel: [ClientCommand] = []
    /// Counts reopenings of the admin channel: a held message's tag is valid only on the opening
    /// that took it (`AMQPHeldMessage`).
    var adminChannelOpenings: UInt64 = 0
    var policy: ConnectionPolicy
    var backoff: Backoff
    var reconnectAt = ContinuousClock.now
    /// The broker nodes and which one is next; nil until `run` parsed the URL.
    var rotation: EndpointRotation?

    init(client: AMQPClient, timing: ConnectionPolicy.Timing = .init()) {
        self.client = client
        self.logger = client.logger
        self.topology = client.initialTopology
        self.policy = ConnectionPolicy(timing: timing)
        self.backoff = Backoff(range: client.configuration.reconnectDelay)
    }

    func run() {
        do {
            rotation = EndpointRotation(try client.configuration.endpoints())
        } catch {
            logger.error("AMQP client cannot start", metadata: [LogKeys.error: "\(error)"])
            client.markUnusable(error)
            idleUntilStopped(error)
            client.markStopped()
            return
        }

        while !client.isStopping {
            if let connection {
                do {
                    try iterate(connection)
                } catch {
                    lose(connection, error)
                }
            } else if ContinuousClock.now < reconnectAt {
                pauseDisconnected(until: reconnectAt)
            } else if let rotation, !connect(rotation.current) {
                self.rotation?.failed()
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
            guard let frame = try connection.readFrame(bodyLimit: { consumers.deliveryConsumer(wireTag: $0)?.bodyLimit ?? 0 }) else {
                drained = true
                break
            }
            try handle(frame, on: connection)
        }
        let now = ContinuousClock.now
        try send(policy.dueAcks(now: now), on: connection)
        switch policy.checkConfirms(now: now) {
        case .fine: break
        case .expired(let settled):
            logger.warning("AMQP publishes not confirmed in time; failed for a retry", metadata: [LogKeys.count: "\(settled.count)"])
            complete(settled)
        case .brokerSilent(let error): throw error
        }
        // Only poll once the library reported nothing buffered (poll() cannot see its buffers)
        // and no commands are left over (they would not signal the wake-up again).
        let idle = drained && !moreCommands
        if policy.write(idle: idle, hasBufferedFrames: connection.hasBufferedFrames, now: now) == .now {
            // The commands' publishes and acks, and what frame handling added (publishes held while
            // the broker blocked us). Order is kept below: every method rabbitmq-c writes itself
            // (close-ok, channel.open, consume…) is preceded by a flush in `AMQPConnection`.
            try connection.flushFrames()
        }
        connection.releaseBuffers()
        if idle {
            let timeout = policy.pollTimeout(base: pollTimeout(connection), now: now)
            client.waitForWork(socket: connection.socketDescriptor, timeoutMilliseconds: timeout)
        }
    }

    /// Well under the heartbeat, because heartbeats are only sent from inside library calls.
    private func pollTimeout(_ connection: AMQPConnection) -> Int32 {
        guard connection.heartbeat > 0 else { return 500 }
        return Int32(min(500, max(10, connection.heartbeat * 1000 / 4)))
    }

    private func connect(_ endpoint: AMQPEndpoint) -> Bool {
        logger[metadataKey: "amqp.endpoint"] = "\(endpoint)"
        do throws(AMQPError) {
            let connection = try AMQPConnection(
                endpoint: endpoint, configuration: client.configuration,
                channels: [Self.consumeChannel, Self.publishChannel, Self.adminChannel],
                confirmChannels: [Self.publishChannel])
            do throws(AMQPError) {
                // Nothing is outstanding between connections: `lose` and `stop` already reset.
                try declare(topology, on: connection)
                for tag in consumers.connectionEnded() {
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

    /// Drops a failed connection: the policy's one reset fails outstanding and held publishes and
    /// forgets unacked deliveries (the broker requeues them); a reconnect is scheduled.
    func lose(_ connection: AMQPConnection, _ error: AMQPError) {
        self.connection = nil
        connection.close()  // no-op when already broken
        // The node may be gone: the next attempt goes to another one of the cluster.
        rotation?.failed()
        let lost = AMQPError(code: .connectionLost, status: error.status,
                             message: "connection lost before the broker confirmed: \(error.message)")
        complete(policy.reset(failingWith: lost))
        handleWhileDisconnected(adminAfterCancel[...], reason: lost)
        adminAfterCancel = []
        _ = consumers.connectionEnded()
        policy.smallestPrefetch = consumers.smallestActivePrefetch
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
        handleWhileDisconnected(client.takeCommands()[...], reason: lastError)
    }

    private func idleUntilStopped(_ error: AMQPError) {
        while !client.isStopping {
            client.waitForWork(socket: -1, timeoutMilliseconds: 500)
            handleWhileDisconnected(client.takeCommands()[...], reason: error)
        }
    }

    /// Publishes and RPCs fail at once (waiting for a reconnect could take arbitrarily long);
    /// consumer changes are remembered for the next connection; acks are moot (requeued).
    func handleWhileDisconnected(_ commands: ArraySlice<ClientCommand>, reason: AMQPError?) {
        let error = AMQPError(code: reason?.code == .invalidURL ? .invalidURL : .connectionLost, status: reason?.status,
                              message: "not connected to the broker" + (reason.map { ": \($0.message)" } ?? ""))
        for command in commands {
            switch command {
            case .publish, .admin:
                command.fail(with: error)
            case .ack(let tag, _), .nack(let tag, _, _):
                logger.debug("AMQP ack dropped while disconnected", metadata: [LogKeys.tag: "\(tag)"])
            case .consume(let queue, let prefetch, let maxBodyBytes, let bodyRoom, let handler):
                _ = consumers.consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes, bodyRoom: bodyRoom, handler: handler)
            case .stopConsuming:
                _ = consumers.stopAll()
            }
        }
        policy.smallestPrefetch = consumers.smallestActivePrefetch
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
                try send(policy.allAcks(), on: connection)
                try connection.flushFrames()
                for tag in consumers.stopAll() {
                    try sendCancel(tag, on: connection)
                }
            } catch {
                logger.debug("AMQP error during shutdown", metadata: [LogKeys.error: "\(error)"])
            }
            connection.close()
        }
        connection = nil
        for command in adminAfterCancel { command.fail(with: shutdownError) }
        adminAfterCancel = []
        complete(policy.reset(failingWith: shutdownError))
        logger.info("AMQP client stopped")
        client.markStopped()
    }

    func complete(_ settled: PublishConfirms.Settled) {
        for (completion, result) in settled { completion(result) }
    }
}
