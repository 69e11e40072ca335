import Logging

/// `redis://`: one server, one connection. A broken connection is dropped and reopened on the
/// next command; the command that met the break fails (callers decide whether to retry).
final class StandaloneRouter: CommandRouter {
    private let configuration: RedisConfiguration
    private let logger: Logger
    private var connection: RedisConnection?

    init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    func run(_ arguments: [String], deadline: ContinuousClock.Instant) throws(RedisError) -> RedisReply {
        try use { connection throws(RedisError) in try connection.run(arguments) }
    }

    func runPipeline(_ commands: [[String]], deadline: ContinuousClock.Instant) throws(RedisError) -> [RedisReply] {
        try use { connection throws(RedisError) in try connection.pipeline(commands) }
    }

    private func use<Result>(_ body: (RedisConnection) throws(RedisError) -> Result) throws(RedisError) -> Result {
        let connection: RedisConnection
        if let existing = self.connection {
            connection = existing
        } else {
            connection = try RedisConnection(configuration: configuration)
            self.connection = connection
            logger.debug("connected to Redis", metadata: [LogKeys.host: "\(configuration.host):\(configuration.port)"])
        }
        do {
            return try body(connection)
        } catch {
            // A hiredis context error leaves the context unusable; the next command reconnects.
            self.connection = nil
            logger.warning("Redis connection failed", metadata: [LogKeys.error: "\(error.message)"])
            throw error
        }
    }
}
