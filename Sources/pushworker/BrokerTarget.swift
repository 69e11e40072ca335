import AMQP
import ArgumentParser
import Logging
import PushCore
import WorkerConfigurationFile

/// The queues an operator's command looks at, named as `pushworker run` names them: the same
/// `--job-queue` and `--retry-delays` (and their PUSHWORKER_* variables), or the file's
/// `worker:` section with `--config` (the options still win). The dead queue is `<job queue>.dead`.
struct BrokerTarget: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Take the connections, worker.job_queue and worker.retry_delays from this YAML file, as `run --config` does (the options here win). [env PUSHWORKER_CONFIG]")
    var config: String?
    @Option(help: "Job queue name; the dead queue is <job queue>.dead. Default \(Defaults.worker.jobQueue). [env PUSHWORKER_JOB_QUEUE]")
    var jobQueue: String?
    @Option(help: "Comma-separated retry delays: one delay queue <job queue>.retry.<delay> each. Default \(Defaults.retryDelays). [env PUSHWORKER_RETRY_DELAYS]")
    var retryDelays: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical. Default warning. [env PUSHWORKER_LOG_LEVEL]")
    var logLevel: String?

    /// The connection, job queue and delays in effect.
    func resolve(connectionName: String) throws -> (amqp: AMQPConfiguration, jobQueue: String, retryDelays: [Duration]) {
        var settings = WorkerSettings()
        if let path = Env.or(config, "config") {
            do { settings = try ConfigurationFileReader.read(path: path).settings } catch {
                throw ValidationError("\(path) has errors:\n\(error.description)")
            }
        }
        var overrides = WorkerSettings()
        overrides.amqpURL = Env.or(connection.amqpURL, "amqp-url")
        overrides.amqpCAFile = Env.or(connection.amqpCAFile, "amqp-ca-file")
        overrides.jobQueue = Env.or(jobQueue, "job-queue")
        if let delays = Env.or(retryDelays, "retry-delays") { overrides.retryDelays = try WorkerOptions.delays(delays) }
        settings = settings.overridden(by: overrides)
        var amqp = AMQPConfiguration(url: settings.amqpURL ?? WorkerSettings.defaultAMQPURL)
        amqp.caFile = settings.amqpCAFile
        amqp.connectionName = connectionName
        return (amqp, settings.jobQueue ?? Defaults.worker.jobQueue, settings.retryDelays ?? Defaults.worker.retry.delays)
    }

    /// Runs `body` with a connected client, and closes it whatever happens.
    func withBroker<Result>(connectionName: String, _ body: (AMQPClient, _ jobQueue: String, _ retryDelays: [Duration]) async throws -> Result) async throws -> Result {
        let (configuration, jobQueue, retryDelays) = try resolve(connectionName: connectionName)
        let level = Env.or(logLevel, "log-level") ?? "warning"
        guard let parsed = Logger.Level(rawValue: level) else {
            throw ValidationError("--log-level: unknown level \"\(level)\" (trace, debug, info, notice, warning, error, critical)")
        }
        let client = AMQPClient(configuration: configuration, topology: [],
                                logger: LoggingOptions.makeLogger(label: connectionName, level: parsed))
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
            let result = try await body(client, jobQueue, retryDelays)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
