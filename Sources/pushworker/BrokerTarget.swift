import AMQP
import ArgumentParser
import Logging
import WorkerConfigurationFile

/// The broker and job queue an operator's command works on, named as `pushworker run` names
/// them: the same `--job-queue` (and PUSHWORKER_* variables), or the file's `worker:` section with
/// `--config` (the options still win). The dead queue is `<job queue>.dead`.
struct BrokerTarget: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Take amqp.url, amqp.ca_file and the worker: section (job_queue; retry_delays for `queues`) from this YAML file, as `run --config` does; the options here win. [env PUSHWORKER_CONFIG]")
    var config: String?
    @Option(help: "Job queue name; the dead queue is <job queue>.dead. Default \(Defaults.worker.jobQueue). [env PUSHWORKER_JOB_QUEUE]")
    var jobQueue: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical. Default error: the command says itself what went wrong. [env PUSHWORKER_LOG_LEVEL]")
    var logLevel: String?

    /// The connection and worker settings in effect (the file's under the options').
    func resolve(connectionName: String) throws -> (amqp: AMQPConfiguration, settings: WorkerSettings) {
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
        settings = settings.overridden(by: overrides)
        var amqp = AMQPConfiguration(url: settings.amqpURL ?? WorkerSettings.defaultAMQPURL)
        amqp.caFile = settings.amqpCAFile
        amqp.connectionName = connectionName
        return (amqp, settings)
    }

    /// Runs `body` with a connected client, the job queue and the settings, and closes the client whatever happens.
    func withBroker<Result>(connectionName: String,
                            _ body: (AMQPClient, _ jobQueue: String, WorkerSettings) async throws -> Result) async throws -> Result {
        let (configuration, settings) = try resolve(connectionName: connectionName)
        let level = Env.or(logLevel, "log-level") ?? "error"
        guard let parsed = Logger.Level(rawValue: level) else {
            throw ValidationError("--log-level: unknown level \"\(level)\" (trace, debug, info, notice, warning, error, critical)")
        }
        let client = AMQPClient(configuration: configuration, topology: [],
                                logger: LoggingOptions.makeLogger(label: connectionName, level: parsed, format: .text))
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
            let result = try await body(client, settings.jobQueue ?? Defaults.worker.jobQueue, settings)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
