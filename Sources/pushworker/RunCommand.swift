import APNs
import ArgumentParser
import Foundation
import Logging
import PushCore
import StatusEndpoint
import ServiceLifecycle
import Worker

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run a worker: consume push.jobs and deliver to APNs until SIGTERM/SIGINT.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var apns: APNsOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: "The app name jobs use for these APNs settings (the job's \"app\"). [env PUSHWORKER_APP]")
    var app: String = Env["app"] ?? "default"
    @Option(help: "Jobs held unacked at once: auto (sized from the jobs' devices and bytes, 10…1000; starts at 100) or a number. [env PUSHWORKER_PREFETCH]")
    var prefetch: String = Env["prefetch"] ?? "auto"
    @Option(help: "Notifications in flight to APNs at once, across jobs: jobs wait for room (flow control by devices, not jobs). [env PUSHWORKER_MAX_IN_FLIGHT]")
    var maxInFlight: Int = Env.int("max-in-flight", default: 4000)
    @Option(help: "Fan-outs above this many devices are split into chunk jobs. [env PUSHWORKER_CHUNK_SIZE]")
    var chunkSize: Int = Env.int("chunk-size", default: 1000)
    @Option(help: "Comma-separated retry delays, one delay queue each. [env PUSHWORKER_RETRY_DELAYS]")
    var retryDelays: String = Env["retry-delays"] ?? "1s,5s,30s,2m,10m"
    @Option(help: "Redis key prefix of group sets: <prefix><app>:<group>. [env PUSHWORKER_GROUP_KEY_PREFIX]")
    var groupKeyPrefix: String = Env["group-key-prefix"] ?? "group:"
    @Option(help: "Larger job messages are rejected. [env PUSHWORKER_MAX_MESSAGE_BYTES]")
    var maxMessageBytes: Int = Env.int("max-message-bytes", default: 4 * 1024 * 1024)
    @Option(help: "Job bodies held in memory above this many bytes pause consumption until half is free. [env PUSHWORKER_MAX_BYTES_IN_FLIGHT]")
    var maxBytesInFlight: Int = Env.int("max-bytes-in-flight", default: 64 * 1024 * 1024)
    @Option(help: "A job redelivered more often than this without being settled (workers crashed holding it) is dead-lettered. [env PUSHWORKER_MAX_REDELIVERIES]")
    var maxRedeliveries: Int = Env.int("max-redeliveries", default: 5)
    @Option(help: "Which jobs publish job.completed: all, failures (a device failed, was invalid, retried or held; a group missing; a split) or none. [env PUSHWORKER_COMPLETION_EVENTS]")
    var completionEvents: String = Env["completion-events"] ?? "all"
    @Option(help: "Seconds to let in-flight jobs settle after SIGTERM. [env PUSHWORKER_SHUTDOWN_TIMEOUT]")
    var shutdownTimeout: Int = Env.int("shutdown-timeout", default: 30)
    @Option(help: "Seconds between credential retries after APNs refused them. [env PUSHWORKER_CREDENTIALS_RETRY_INTERVAL]")
    var credentialsRetryInterval: Int = Env.int("credentials-retry-interval", default: 60)
    @Option(help: "Job queue name. [env PUSHWORKER_JOB_QUEUE]")
    var jobQueue: String = Env["job-queue"] ?? "push.jobs"
    @Option(help: "Results exchange name. [env PUSHWORKER_RESULTS_EXCHANGE]")
    var resultsExchange: String = Env["results-exchange"] ?? "push.results"
    @Option(help: "Serve GET /status and /healthz on this port (0 = off). [env PUSHWORKER_STATUS_PORT]")
    var statusPort: Int = Env.int("status-port", default: 0)
    @Option(help: "Address of the status endpoint. [env PUSHWORKER_STATUS_HOST]")
    var statusHost: String = Env["status-host"] ?? "127.0.0.1"
    @Option(help: "On exit, write totals and latency percentiles as JSON to this file (used by ops/bench). [env PUSHWORKER_STATS_FILE]")
    var statsFile: String?

    func validate() throws {
        guard prefetch == "auto" || (Int(prefetch).map { (1...65535).contains($0) } ?? false) else {
            throw ValidationError("--prefetch must be auto or 1…65535, got \"\(prefetch)\"")
        }
        guard (1...100_000).contains(chunkSize) else { throw ValidationError("--chunk-size must be 1…100000") }
        guard maxMessageBytes >= 1024 else { throw ValidationError("--max-message-bytes must be at least 1024") }
        guard maxBytesInFlight >= maxMessageBytes else { throw ValidationError("--max-bytes-in-flight must be at least --max-message-bytes (\(maxMessageBytes))") }
        guard maxRedeliveries >= 1 else { throw ValidationError("--max-redeliveries must be at least 1") }
        let largestChunk = WorkerConfiguration.largestChunkJobBytes(chunkSize: chunkSize)
        guard largestChunk <= maxMessageBytes else {
            throw ValidationError("--chunk-size \(chunkSize) makes chunk jobs of up to \(largestChunk) bytes, above --max-message-bytes \(maxMessageBytes): the worker would reject its own chunk jobs. Lower --chunk-size to \(WorkerConfiguration.largestChunkSize(maxMessageBytes: maxMessageBytes)) or raise --max-message-bytes")
        }
        _ = try delays()
    }

    func delays() throws -> [Duration] {
        let parts = retryDelays.split(separator: ",").map { String($0) }
        var delays = [Duration]()
        for part in parts {
            guard let delay = DurationText.parse(part), delay > .zero else {
                throw ValidationError("--retry-delays: \"\(part)\" is not a duration (examples: 500ms, 5s, 2m, 1h)")
            }
            delays.append(delay)
        }
        return delays
    }

    func run() async throws {
        let logger = try logging.makeLogger(label: "pushworker")
        var configuration = WorkerConfiguration(
            amqp: connection.amqpConfiguration(name: "pushworker"),
            redis: try connection.redisConfiguration(),
            apps: [app: try apns.configuration(logger: logger)])
        if let fixed = UInt16(prefetch) {
            configuration.prefetch = fixed
            configuration.tunesPrefetch = false
        }
        guard maxInFlight >= 1 else { throw ValidationError("--max-in-flight must be at least 1") }
        configuration.maxInFlight = maxInFlight
        configuration.chunkSize = chunkSize
        configuration.retry = RetryPolicy(delays: try delays(), jobQueue: jobQueue)
        configuration.jobQueue = jobQueue
        configuration.deadQueue = jobQueue + ".dead"
        configuration.resultsExchange = resultsExchange
        configuration.groupKeyPrefix = groupKeyPrefix
        configuration.maxMessageBytes = maxMessageBytes
        configuration.maxBytesInFlight = maxBytesInFlight
        configuration.maxRedeliveries = maxRedeliveries
        guard let completion = CompletionEvents(rawValue: completionEvents) else {
            throw ValidationError("--completion-events must be all, failures or none, got \"\(completionEvents)\"")
        }
        configuration.completionEvents = completion
        configuration.shutdownTimeout = .seconds(shutdownTimeout)
        configuration.credentialsRetryInterval = .seconds(credentialsRetryInterval)
        let worker: PushWorker
        do { worker = try PushWorker(configuration: configuration, logger: logger) } catch {
            throw ValidationError(error.message)
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: worker)]
        if statusPort > 0 {
            services.append(.init(service: StatusServer(host: statusHost, port: statusPort, status: worker.status, logger: logger)))
        }
        let group = ServiceGroup(configuration: .init(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        if let path = Env.or(statsFile, "stats-file") { try writeStats(worker, to: path) }
    }

    /// The same document `GET /status` serves, at exit.
    private func writeStats(_ worker: PushWorker, to path: String) throws {
        try Data(worker.status.json()).write(to: URL(fileURLWithPath: path))
    }
}
