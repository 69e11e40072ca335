import ArgumentParser
import Logging
import PushCore
import Worker
import WorkerConfigurationFile

/// The worker-wide options of `run` and `config check`. None has a default here: an option not
/// given leaves the file's value, or else `WorkerConfiguration`'s default, in place.
struct WorkerOptions: ParsableArguments {
    @Option(help: "YAML configuration file: connections, worker settings and every app (see examples/pushworker.yaml). Options given here override it. [env PUSHWORKER_CONFIG]")
    var config: String?

    @Option(help: "Jobs held unacked at once: auto (sized from the jobs' devices and bytes, 10…65535; starts at 100) or a number. Default auto. [env PUSHWORKER_PREFETCH]")
    var prefetch: String?
    @Option(help: "Notifications in flight at once, across jobs, apps and platforms: jobs wait for room (flow control by devices, not jobs). Default \(Defaults.worker.maxInFlight). [env PUSHWORKER_MAX_IN_FLIGHT]")
    var maxInFlight: Int?
    @Option(help: "Fan-outs above this many devices are split into chunk jobs. Default \(Defaults.worker.chunkSize). [env PUSHWORKER_CHUNK_SIZE]")
    var chunkSize: Int?
    @Option(help: "Comma-separated retry delays, one delay queue each. Default \(Defaults.retryDelays). [env PUSHWORKER_RETRY_DELAYS]")
    var retryDelays: String?
    @Option(help: "Redis key prefix of group sets: <prefix><app>:<group>. Default \(Defaults.worker.groupKeyPrefix). [env PUSHWORKER_GROUP_KEY_PREFIX]")
    var groupKeyPrefix: String?
    @Option(help: "Larger job messages are rejected. Default \(Defaults.worker.maxMessageBytes). [env PUSHWORKER_MAX_MESSAGE_BYTES]")
    var maxMessageBytes: Int?
    @Option(help: "Job bodies held in memory above this many bytes pause consumption until half is free. Default \(Defaults.worker.maxBytesInFlight). [env PUSHWORKER_MAX_BYTES_IN_FLIGHT]")
    var maxBytesInFlight: Int?
    @Option(help: "A job redelivered more often than this without being settled (workers crashed holding it) is dead-lettered. Default \(Defaults.worker.maxRedeliveries). [env PUSHWORKER_MAX_REDELIVERIES]")
    var maxRedeliveries: Int?
    @Option(help: "Which jobs publish job.completed: all, failures (a device failed, was invalid, retried or held; a group missing; a split) or none. Default \(Defaults.worker.completionEvents.rawValue). [env PUSHWORKER_COMPLETION_EVENTS]")
    var completionEvents: String?
    @Option(help: "Seconds to let in-flight jobs settle after SIGTERM. Default \(Defaults.seconds(Defaults.worker.shutdownTimeout)). [env PUSHWORKER_SHUTDOWN_TIMEOUT]")
    var shutdownTimeout: Int?
    @Option(help: "Seconds between credential retries after APNs refused them. Default \(Defaults.seconds(Defaults.worker.credentialsRetryInterval)). [env PUSHWORKER_CREDENTIALS_RETRY_INTERVAL]")
    var credentialsRetryInterval: Int?
    @Option(help: "Seconds a job for an app this worker does not serve waits in the delay queues before it is dead-lettered (\"unknown app\"): a fleet's workers load a new app one after the other. 0 rejects it at once. Default \(Defaults.seconds(Defaults.worker.unknownAppGrace)). [env PUSHWORKER_UNKNOWN_APP_GRACE]")
    var unknownAppGrace: Int?
    @Option(help: "Seconds between provider-token refreshes: every worker uses one token per team and key, kept in Redis at pushworker:jwt:<team id>:<key id>:<key fingerprint>. 1200…3000. Default \(Defaults.seconds(Defaults.worker.providerTokenRefresh)). [env PUSHWORKER_TOKEN_REFRESH]")
    var tokenRefresh: Int?
    @Flag(help: "Allow --token-refresh below 20 minutes: only for tests against the sandbox (pushworker sandbox --token-update-interval); APNs would answer TooManyProviderTokenUpdates. [env PUSHWORKER_TOKEN_REFRESH_FOR_SANDBOX_TESTS=1]")
    var tokenRefreshForSandboxTests = false
    @Option(help: "Job queue name. Default \(Defaults.worker.jobQueue). [env PUSHWORKER_JOB_QUEUE]")
    var jobQueue: String?
    @Option(help: "Results exchange name. Default \(Defaults.worker.resultsExchange). [env PUSHWORKER_RESULTS_EXCHANGE]")
    var resultsExchange: String?
    @Option(help: "Serve GET /status, /readyz (alias /healthz), /livez and /metrics (Prometheus) on this port (0 = off, the default). [env PUSHWORKER_STATUS_PORT]")
    var statusPort: Int?
    @Option(help: "Address of the status endpoint. Default \(WorkerSettings.defaultStatusHost). [env PUSHWORKER_STATUS_HOST]")
    var statusHost: String?

    /// The file named by `--config` (or `PUSHWORKER_CONFIG`, which becomes `--config` before parsing).
    var configFile: String? { Env.or(config, "config") }

    /// The options given, checked one by one; the rules between them are checked once the
    /// layers are merged (`WorkerSettings.apply`).
    func settings(connection: ConnectionOptions, logging: LoggingOptions) throws -> WorkerSettings {
        var settings = WorkerSettings()
        settings.amqpURL = connection.amqpURL
        settings.amqpCAFile = connection.amqpCAFile
        settings.redisURL = connection.redisURL
        settings.queueType = try connection.parsedQueueType()
        if let prefetch {
            guard let value = WorkerSettings.Prefetch(prefetch) else {
                throw ValidationError("--prefetch must be auto or 1…65535, got \"\(prefetch)\"")
            }
            settings.prefetch = value
        }
        settings.maxInFlight = maxInFlight
        settings.chunkSize = chunkSize
        if let retryDelays { settings.retryDelays = try Self.delays(retryDelays) }
        settings.groupKeyPrefix = groupKeyPrefix
        settings.maxMessageBytes = maxMessageBytes
        settings.maxBytesInFlight = maxBytesInFlight
        settings.maxRedeliveries = maxRedeliveries
        if let completionEvents {
            guard let value = CompletionEvents(rawValue: completionEvents) else {
                throw ValidationError("--completion-events must be all, failures or none, got \"\(completionEvents)\"")
            }
            settings.completionEvents = value
        }
        settings.shutdownTimeout = shutdownTimeout.map { .seconds($0) }
        settings.credentialsRetryInterval = credentialsRetryInterval.map { .seconds($0) }
        settings.unknownAppGrace = unknownAppGrace.map { .seconds($0) }
        settings.tokenRefresh = tokenRefresh.map { .seconds($0) }
        // Not given leaves the file's value in place.
        settings.tokenRefreshForSandboxTests = tokenRefreshForSandboxTests ? true : nil
        settings.jobQueue = jobQueue
        settings.resultsExchange = resultsExchange
        settings.statusPort = statusPort
        settings.statusHost = statusHost
        if let level = logging.logLevel {
            guard let value = Logger.Level(rawValue: level) else {
                throw ValidationError("--log-level: unknown level \"\(level)\" (trace, debug, info, notice, warning, error, critical)")
            }
            settings.logLevel = value
        }
        return settings
    }

    static func delays(_ text: String) throws -> [Duration] {
        try text.split(separator: ",").map { part in
            guard let delay = DurationText.parse(String(part)), delay > .zero else {
                throw ValidationError("--retry-delays: \"\(part)\" is not a duration (examples: 500ms, 5s, 2m, 1h)")
            }
            return delay
        }
    }
}
