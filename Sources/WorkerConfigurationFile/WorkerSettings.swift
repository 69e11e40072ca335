import Foundation
import AMQP
import Logging
import PushCore
import Redis
import Worker

/// The process-wide settings, each nil until some layer gives it: the file, then the environment
/// and the command line on top. The defaults are not here: an unset value keeps what
/// `WorkerConfiguration` starts with, so each default is written once.
public struct WorkerSettings: Sendable, Equatable {
    public enum Prefetch: Sendable, Equatable, CustomStringConvertible {
        /// Sized from the jobs as they arrive.
        case auto
        case fixed(UInt16)

        public init?(_ text: String) {
            if text == "auto" { self = .auto; return }
            guard let value = Int(text), (1...65535).contains(value) else { return nil }
            self = .fixed(UInt16(value))
        }

        public var description: String {
            switch self {
            case .auto: "auto"
            case let .fixed(value): "\(value)"
            }
        }
    }

    public var amqpURL: String?
    public var amqpCAFile: String?
    public var redisURL: String?
    public var prefetch: Prefetch?
    public var maxInFlight: Int?
    public var chunkSize: Int?
    public var retryDelays: [Duration]?
    public var groupKeyPrefix: String?
    public var maxMessageBytes: Int?
    public var maxBytesInFlight: Int?
    public var maxRedeliveries: Int?
    public var completionEvents: CompletionEvents?
    public var shutdownTimeout: Duration?
    public var credentialsRetryInterval: Duration?
    public var unknownAppGrace: Duration?
    public var tokenRefresh: Duration?
    public var tokenRefreshForSandboxTests: Bool?
    public var jobQueue: String?
    public var queueType: QueueType?
    public var resultsExchange: String?
    public var statusPort: Int?
    public var statusHost: String?
    public var logLevel: Logger.Level?

    /// Not in `WorkerConfiguration` (the executable owns them), so their defaults live here.
    public static let defaultAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"
    public static let defaultRedisURL = "redis://127.0.0.1:6379/0"
    public static let defaultStatusPort = 0
    public static let defaultStatusHost = "127.0.0.1"
    public static let defaultLogLevel = Logger.Level.info

    public init() {}

    /// `self` with every value `higher` sets replacing this one's.
    public func overridden(by higher: WorkerSettings) -> WorkerSettings {
        var merged = self
        func take<Value>(_ path: WritableKeyPath<WorkerSettings, Value?>) {
            if let value = higher[keyPath: path] { merged[keyPath: path] = value }
        }
        take(\.amqpURL); take(\.amqpCAFile); take(\.redisURL); take(\.prefetch); take(\.maxInFlight)
        take(\.chunkSize); take(\.retryDelays); take(\.groupKeyPrefix); take(\.maxMessageBytes)
        take(\.maxBytesInFlight); take(\.maxRedeliveries); take(\.completionEvents); take(\.shutdownTimeout)
        take(\.credentialsRetryInterval); take(\.unknownAppGrace); take(\.jobQueue); take(\.queueType); take(\.resultsExchange); take(\.statusPort)
        take(\.statusHost); take(\.logLevel); take(\.tokenRefresh); take(\.tokenRefreshForSandboxTests)
        return merged
    }

    public var effectiveStatusPort: Int { statusPort ?? Self.defaultStatusPort }
    public var effectiveStatusHost: String { statusHost ?? Self.defaultStatusHost }
    public var effectiveLogLevel: Logger.Level { logLevel ?? Self.defaultLogLevel }

    /// The AMQP and Redis connections these settings name.
    public func connections(connectionName: String) throws(SettingError) -> (AMQPConfiguration, RedisConfiguration) {
        var amqp = AMQPConfiguration(url: amqpURL ?? Self.defaultAMQPURL)
        amqp.caFile = amqpCAFile
        amqp.connectionName = connectionName
        do { _ = try amqp.endpoints() } catch { throw SettingError(setting: "amqp.url", error.message) }
        let redis: RedisConfiguration
        do { redis = try RedisConfiguration(url: redisURL ?? Self.defaultRedisURL) } catch {
            throw SettingError(setting: "redis.url", "\(error.message)")
        }
        return (amqp, redis)
    }

    /// How settings are named in messages: as the file's keys or as the command line's options.
    public enum Naming: Sendable {
        case file, flags

        func callAsFunction(_ key: String) -> String {
            switch self {
            case .file: key
            case .flags: "--" + key.replacingOccurrences(of: "_", with: "-").replacingOccurrences(of: ".", with: "-")
            }
        }
    }

    /// Sets every value given on `configuration`, then checks the values that depend on each other.
    public func apply(to configuration: inout WorkerConfiguration, naming: Naming = .file) throws(SettingError) {
        switch prefetch {
        case .auto: configuration.tunesPrefetch = true
        case let .fixed(value):
            configuration.prefetch = value
            configuration.tunesPrefetch = false
        case nil: break
        }
        if let maxInFlight { configuration.maxInFlight = maxInFlight }
        if let chunkSize { configuration.chunkSize = chunkSize }
        if let jobQueue {
            configuration.jobQueue = jobQueue
            configuration.deadQueue = jobQueue + ".dead"
        }
        if let queueType { configuration.queueType = queueType }
        // The delay queues are named after the job queue, so the policy is rebuilt when either changes.
        let delays = retryDelays ?? configuration.retry.delays
        configuration.retry = RetryPolicy(delays: delays, jobQueue: configuration.jobQueue)
        if let resultsExchange { configuration.resultsExchange = resultsExchange }
        if let groupKeyPrefix { configuration.groupKeyPrefix = groupKeyPrefix }
        if let maxMessageBytes { configuration.maxMessageBytes = maxMessageBytes }
        if let maxBytesInFlight { configuration.maxBytesInFlight = maxBytesInFlight }
        if let maxRedeliveries { configuration.maxRedeliveries = maxRedeliveries }
        if let completionEvents { configuration.completionEvents = completionEvents }
        if let shutdownTimeout { configuration.shutdownTimeout = shutdownTimeout }
        if let credentialsRetryInterval { configuration.credentialsRetryInterval = credentialsRetryInterval }
        if let unknownAppGrace { configuration.unknownAppGrace = unknownAppGrace }
        if let tokenRefresh { configuration.providerTokenRefresh = tokenRefresh }
        if let tokenRefreshForSandboxTests { configuration.providerTokenRefreshBelow20Minutes = tokenRefreshForSandboxTests }
        try Self.check(configuration, naming: naming)
    }

    /// The rules between settings, on the values in effect whatever layer gave them.
    static func check(_ configuration: WorkerConfiguration, naming name: Naming) throws(SettingError) {
        guard configuration.maxInFlight >= 1 else { throw SettingError(setting: "max_in_flight", "\(name("max_in_flight")) must be at least 1") }
        guard (1...100_000).contains(configuration.chunkSize) else { throw SettingError(setting: "chunk_size", "\(name("chunk_size")) must be 1…100000") }
        guard configuration.maxMessageBytes >= 1024 else { throw SettingError(setting: "max_message_bytes", "\(name("max_message_bytes")) must be at least 1024") }
        guard configuration.maxBytesInFlight >= configuration.maxMessageBytes else {
            throw SettingError(setting: "max_bytes_in_flight", "\(name("max_bytes_in_flight")) must be at least \(name("max_message_bytes")) (\(configuration.maxMessageBytes))")
        }
        guard configuration.maxRedeliveries >= 1 else { throw SettingError(setting: "max_redeliveries", "\(name("max_redeliveries")) must be at least 1") }
        guard configuration.unknownAppGrace >= .zero, configuration.unknownAppGrace <= WorkerConfiguration.longestUnknownAppGrace else {
            throw SettingError(setting: "unknown_app_grace", "\(name("unknown_app_grace")) must be 0…\(DurationText.format(WorkerConfiguration.longestUnknownAppGrace)) (0: a job for an app not served is rejected at once), got \(DurationText.format(configuration.unknownAppGrace))")
        }
        if configuration.queueType == .quorum {
            if let longest = configuration.retry.delays.max(), longest > WorkerConfiguration.longestHeldDelay {
                throw SettingError(setting: "retry_delays", "\(name("retry_delays")) \(DurationText.format(longest)) is longer than \(DurationText.format(WorkerConfiguration.longestHeldDelay)), the longest a retry is held with \(name("queue_type")) quorum: the worker holds it unacked, and RabbitMQ closes the channel of a delivery unacked past its consumer_timeout (30 minutes by default)")
            }
            guard configuration.maxRedeliveries < WorkerConfiguration.quorumDeliveryLimit else {
                throw SettingError(setting: "max_redeliveries", "\(name("max_redeliveries")) must be below \(WorkerConfiguration.quorumDeliveryLimit) with \(name("queue_type")) quorum: the quorum queues' x-delivery-limit is \(WorkerConfiguration.quorumDeliveryLimit), and the worker must reject a job (with its event) before the broker does")
            }
        }
        let refreshRange = configuration.providerTokenRefreshBelow20Minutes
            ? WorkerConfiguration.providerTokenRefreshTestRange : WorkerConfiguration.providerTokenRefreshRange
        guard refreshRange.contains(configuration.providerTokenRefresh) else {
            let below = configuration.providerTokenRefreshBelow20Minutes ? "" : " (less only with \(name("token_refresh_for_sandbox_tests")), for tests against the sandbox)"
            throw SettingError(setting: "token_refresh", "\(name("token_refresh")) must be \(DurationText.format(refreshRange.lowerBound))…\(DurationText.format(refreshRange.upperBound))\(below), got \(DurationText.format(configuration.providerTokenRefresh))")
        }
        let largestChunk = WorkerConfiguration.largestChunkJobBytes(chunkSize: configuration.chunkSize)
        guard largestChunk <= configuration.maxMessageBytes else {
            throw SettingError(setting: "chunk_size", "\(name("chunk_size")) \(configuration.chunkSize) makes chunk jobs of up to \(largestChunk) bytes, above \(name("max_message_bytes")) \(configuration.maxMessageBytes): the worker would reject its own chunk jobs. Lower \(name("chunk_size")) to \(WorkerConfiguration.largestChunkSize(maxMessageBytes: configuration.maxMessageBytes)) or raise \(name("max_message_bytes"))")
        }
    }
}

/// A setting that cannot be used: `setting` is its key (`chunk_size`, `redis.url`), the message
/// names it as the reader of the message wrote it.
public struct SettingError: Error, Sendable, CustomStringConvertible {
    public let setting: String
    public let message: String

    public init(setting: String, _ message: String) {
        self.setting = setting
        self.message = message
    }

    public var description: String { message }
}
