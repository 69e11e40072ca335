import Logging
import PushCore

/// The body of the AMQP owner thread: it reads commands and frames, feeds them to
/// `ConnectionMachine` and performs the actions it returns (the I/O). Everything here runs on that
/// one thread, so nothing in it is shared or locked, and nothing in it decides.
final class ConnectionLoop {
    typealias Machine = ConnectionMachine
    /// Frames read before looking at the command queue again, so acks and publishes keep flowing
    /// while deliveries pour in.
    static let framesPerIteration = 256
    /// Commands executed before reading frames again.
    static let commandsPerIteration = 2048

    /// What the loop keeps of a consumer beside the machine's record (at the same index).
    struct ConsumerCallbacks {
        /// Asked per delivery: the most body bytes the application has room for now.
        let bodyRoom: (@Sendable () -> Int)?
        let handler: @Sendable (AMQPDelivery) -> Void
    }

    let client: AMQPClient
    var logger: Logger
    var connection: AMQPConnection?
    var topology: [AMQPDeclaration]
    var machine: Machine
    var consumerCallbacks: [ConsumerCallbacks] = []

    init(client: AMQPClient, rotation: EndpointRotation, timing: ConnectionTiming = .init()) {
        self.client = client
        self.logger = client.logger
        self.topology = client.initialTopology
        self.machine = Machine(rotation: rotation, reconnectDelay: client.configuration.reconnectDelay, timing: timing, now: .now)
    }

    /// Runs the owner thread until shutdown; a URL that names no usable node leaves the client
    /// unusable, answering every command with that error.
    static func run(client: AMQPClient) {
        do {
            let rotation = EndpointRotation(try client.configuration.endpoints())
            ConnectionLoop(client: client, rotation: rotation).run()
        } catch {
            client.logger.error("AMQP client cannot start", metadata: [LogKeys.error: "\(error)"])
            client.markUnusable(error)
            idleUntilStopped(client, error)
            client.markStopped()
        }
    }

    private func run() {
        while !client.isStopping {
            if let connection {
                iterate(connection)
            } else if case .connect(let endpoint)? = machine.attemptDue(now: .now) {
                connect(endpoint)
            } else {
                pauseDisconnected()
            }
        }
        stop()
    }

    /// One pass: queued commands, then up to `framesPerIteration` frames, then the turn's acks,
    /// confirm checks and write, then wait for activity. When the connection breaks, the commands
    /// not run yet are answered without it (publishes and requests fail, consumer changes are kept
    /// for the next connection), so each completes exactly once.
    private func iterate(_ connection: AMQPConnection) {
        let (commands, moreCommands) = client.takeCommands(limit: Self.commandsPerIteration)
        var next = 0
        do throws(AMQPError) {
            while next < commands.count {
                next += 1
                try handle(commands[next - 1], on: connection)
            }
            if let acks = machine.commandsTaken(now: .now) { try perform(acks, on: connection) }

            var drained = false
            for _ in 0..<Self.framesPerIteration {
                // A delivery for a consumer no longer known is requeued unread: its body is not kept.
                guard let frame = try connection.readFrame(bodyLimit: bodyLimit) else {
                    drained = true
                    break
                }
                try handle(frame, on: connection)
            }
            // Only poll once the library reported nothing buffered (poll() cannot see its buffers)
            // and no commands are left over (they would not signal the wake-up again). The write
            // keeps order: every method rabbitmq-c writes itself (close-ok, channel.open, consume…)
            // is preceded by a flush in `AMQPConnection`.
            let idle = drained && !moreCommands
            let now = ContinuousClock.now
            try perform(machine.turnEnded(idle: idle, hasBufferedFrames: connection.hasBufferedFrames, now: now), on: connection)
            connection.releaseBuffers()
            if idle {
                let timeout = machine.pollTimeout(base: pollTimeout(connection), now: now)
                client.waitForWork(socket: connection.socketDescriptor, timeoutMilliseconds: timeout)
            }
        } catch {
            lose(connection, error)
            for command in commands[next...] { handleWithoutConnection(command) }
        }
    }

    /// The largest body of the next delivery to read whole; a larger one is read past and only its
    /// start kept (`AMQPDelivery.discardedBodySize`).
    private func bodyLimit(wireTag: String) -> Int {
        guard let index = machine.consumers.deliveryConsumerIndex(wireTag: wireTag) else { return 0 }
        return min(machine.consumers.values[index].maxBodyBytes, consumerCallbacks[index].bodyRoom?() ?? .max)
    }

    /// Well under the heartbeat, because heartbeats are only sent from inside library calls.
    private func pollTimeout(_ connection: AMQPConnection) -> Int32 {
        guard connection.heartbeat > 0 else { return 500 }
        return Int32(min(500, max(10, connection.heartbeat * 1000 / 4)))
    }

    private func connect(_ endpoint: AMQPEndpoint) {
        logger[metadataKey: "amqp.endpoint"] = "\(endpoint)"
        do throws(AMQPError) {
            let connection = try AMQPConnection(
                endpoint: endpoint, configuration: client.configuration,
                channels: [ConnectionChannels.consume, ConnectionChannels.publish, ConnectionChannels.admin],
                confirmChannels: [ConnectionChannels.publish])
            do throws(AMQPError) {
                try declare(topology, on: connection)
                try perform(machine.opened(), on: connection)
            } catch {
                connection.close()
                throw error
            }
            self.connection = connection
            performWithoutConnection([machine.established()])
        } catch {
            performWithoutConnection([machine.connectFailed(error, now: .now)])
        }
    }

    /// Drops a failed connection; the machine fails what was outstanding and schedules the next attempt.
    func lose(_ connection: AMQPConnection, _ error: AMQPError) {
        self.connection = nil
        connection.close()  // no-op when already broken
        performWithoutConnection(machine.lost(error, now: .now))
    }

    /// Waits for the next reconnect attempt while answering commands that cannot wait.
    private func pauseDisconnected() {
        let now = ContinuousClock.now
        let remaining = (machine.reconnectAt ?? now) - now
        let milliseconds = max(1, min(500, Int32(Backoff.seconds(remaining) * 1000)))
        client.waitForWork(socket: -1, timeoutMilliseconds: milliseconds)
        for command in client.takeCommands() { handleWithoutConnection(command) }
    }

    private static func idleUntilStopped(_ client: AMQPClient, _ reason: AMQPError) {
        let error = AMQPError(code: reason.code == .invalidURL ? .invalidURL : .connectionLost, status: reason.status,
                              message: "not connected to the broker: \(reason.message)")
        while !client.isStopping {
            client.waitForWork(socket: -1, timeoutMilliseconds: 500)
            for command in client.takeCommands() { command.fail(with: error) }
        }
    }

    /// Graceful end: settle acks the application already decided, cancel consumers, close.
    private func stop() {
        let shutdownError = AMQPError(code: .shutdown, message: "client was shut down")
        machine.stopRequested()
        if let connection, !connection.isBroken {
            do throws(AMQPError) {
                for command in client.takeCommands() {
                    switch command {
                    case .ack, .nack: try handle(command, on: connection)
                    default: command.fail(with: shutdownError)
                    }
                }
                try perform(machine.closingWrites(), on: connection)
            } catch {
                logger.debug("AMQP error during shutdown", metadata: [LogKeys.error: "\(error)"])
            }
            connection.close()
        }
        connection = nil
        performWithoutConnection(machine.closed(shutdownError))
        logger.info("AMQP client stopped")
        client.markStopped()
    }
}
