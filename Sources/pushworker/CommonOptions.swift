import AMQP
import ArgumentParser
import Logging
import Redis
import WorkerConfigurationFile

struct ConnectionOptions: ParsableArguments {
    // No defaults here: for `run --config`, an option not given leaves the file's value.
    @Option(help: "RabbitMQ URL (amqp:// or amqps://); the nodes of a cluster comma-separated, amqp://u:p@h1,h2,h3/ or whole URLs: one is chosen at random, the next on failure. Default \(WorkerSettings.defaultAMQPURL). [env PUSHWORKER_AMQP_URL]")
    var amqpURL: String?

    @Option(help: "classic or quorum: the type of the job, bulk, delay and dead queues; every worker, gateway and `send` of a fleet must use the same one (README \"Scaling out\"). Default classic. [env PUSHWORKER_QUEUE_TYPE]")
    var queueType: String?

    @Option(help: "Redis URL, redis://[:password@]host[:port][/db], redis-sentinel://[:password@]host1:26379,host2:26379/master-name[/db] or redis-cluster://[:password@]host1:7000,host2:7001 (docs/guides/redis-ha.md). Default \(WorkerSettings.defaultRedisURL). [env PUSHWORKER_REDIS_URL]")
    var redisURL: String?

    @Option(help: "CA file for amqps:// (default: the system store). [env PUSHWORKER_AMQP_CA_FILE]")
    var amqpCAFile: String?

    func amqpConfiguration(name: String) -> AMQPConfiguration {
        var configuration = AMQPConfiguration(url: Env.or(amqpURL, "amqp-url") ?? WorkerSettings.defaultAMQPURL)
        configuration.caFile = Env.or(amqpCAFile, "amqp-ca-file")
        configuration.connectionName = name
        return configuration
    }

    /// `--queue-type` given (or PUSHWORKER_QUEUE_TYPE), nil when not.
    func parsedQueueType() throws -> QueueType? {
        guard let text = Env.or(queueType, "queue-type") else { return nil }
        guard let type = QueueType(rawValue: text) else {
            throw ValidationError("--queue-type must be classic or quorum, got \"\(text)\"")
        }
        return type
    }

    func redisConfiguration() throws -> RedisConfiguration {
        do { return try RedisConfiguration(url: Env.or(redisURL, "redis-url") ?? WorkerSettings.defaultRedisURL) } catch {
            throw ValidationError("--redis-url: \(error.message)")
        }
    }
}

struct LoggingOptions: ParsableArguments {
    @Option(help: "trace, debug, info, notice, warning, error or critical. Device tokens are shortened above debug. Default \(WorkerSettings.defaultLogLevel.rawValue). [env PUSHWORKER_LOG_LEVEL]")
    var logLevel: String?

    @Option(help: "text (one line per message, as swift-log prints it) or json (one JSON object per line: time, level, label, message, source and the metadata keys; for log shippers). Default text. [env PUSHWORKER_LOG_FORMAT]")
    var logFormat: String?

    func format() throws -> LogFormat {
        let name = Env.or(logFormat, "log-format") ?? LogFormat.text.rawValue
        guard let format = LogFormat(rawValue: name) else {
            throw ValidationError("--log-format must be text or json, got \"\(name)\"")
        }
        return format
    }

    func makeLogger(label: String) throws -> Logger {
        let name = Env.or(logLevel, "log-level") ?? WorkerSettings.defaultLogLevel.rawValue
        guard let level = Logger.Level(rawValue: name) else {
            throw ValidationError("--log-level: unknown level \"\(name)\" (trace, debug, info, notice, warning, error, critical)")
        }
        return Self.makeLogger(label: label, level: level, format: try format())
    }

    /// `run --config` takes the level from the merged settings (the file may set it).
    static func makeLogger(label: String, level: Logger.Level, format: LogFormat) -> Logger {
        LoggingBootstrap.once(level: level, format: format)
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}

enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false
    /// Called once from the main command before any task starts.
    static func once(level: Logger.Level, format: LogFormat) {
        guard !done else { return }
        done = true
        switch format {
        case .text:
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        case .json:
            LoggingSystem.bootstrap { label in
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }
}
