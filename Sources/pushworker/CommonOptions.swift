import AMQP
import ArgumentParser
import Logging
import Redis

struct ConnectionOptions: ParsableArguments {
    @Option(help: "RabbitMQ URL (amqp:// or amqps://). [env PUSHWORKER_AMQP_URL]")
    var amqpURL: String = Env["amqp-url"] ?? "amqp://guest:guest@127.0.0.1:5672/"

    @Option(help: "Redis URL, redis://[:password@]host[:port][/db]. [env PUSHWORKER_REDIS_URL]")
    var redisURL: String = Env["redis-url"] ?? "redis://127.0.0.1:6379/0"

    @Option(help: "CA file for amqps:// (default: the system store). [env PUSHWORKER_AMQP_CA_FILE]")
    var amqpCAFile: String?

    func amqpConfiguration(name: String) -> AMQPConfiguration {
        var configuration = AMQPConfiguration(url: amqpURL)
        configuration.caFile = Env.or(amqpCAFile, "amqp-ca-file")
        configuration.connectionName = name
        return configuration
    }

    func redisConfiguration() throws -> RedisConfiguration {
        do { return try RedisConfiguration(url: redisURL) } catch {
            throw ValidationError("--redis-url: \(error.message)")
        }
    }
}

struct LoggingOptions: ParsableArguments {
    @Option(help: "trace, debug, info, notice, warning, error or critical. Device tokens are shortened above debug. [env PUSHWORKER_LOG_LEVEL]")
    var logLevel: String = Env["log-level"] ?? "info"

    func makeLogger(label: String) throws -> Logger {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level: unknown level \"\(logLevel)\" (trace, debug, info, notice, warning, error, critical)")
        }
        LoggingBootstrap.once(level: level)
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}

enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false
    /// Called once from the main command before any task starts.
    static func once(level: Logger.Level) {
        guard !done else { return }
        done = true
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
