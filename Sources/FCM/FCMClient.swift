#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FCMCore
import HTTP2
import Logging
import NIOConcurrencyHelpers
import PushCore
import PushTransport
import HTTP2Transport

/// Sends one app's notifications with FCM HTTP v1: one `POST /v1/projects/<project>/messages:send`
/// per device over a pool of HTTP/2 connections (many streams each), with the app's shared OAuth
/// access token. Every answer, or its absence, becomes a `PushResult`; nothing throws per device.
public final class FCMClient: PushTransport {
    public let configuration: FCMConfiguration
    public let tokens: FCMAccessTokenSource
    private let http: HTTP2Client
    private let sendPath: String
    private let logger: Logger
    private let clock: FCMAccessTokenSource.Clock
    private let cache = NIOLockedValueBox(Cache())
    private let throttle = NIOLockedValueBox(FCMThrottle())
    private let counterBox = NIOLockedValueBox(FCMClientCounters())

    /// The last job's message template and the last token's header block: every device of a job
    /// shares both, so each is built once.
    private struct Cache {
        var job: PushJob?
        var template: FCMMessageTemplate?
        var token: String?
        var headers: RequestHeaderBlock?
    }

    public init(configuration: FCMConfiguration, logger: Logger, clock: FCMAccessTokenSource.Clock = .system) throws(FCMConfigurationError) {
        try configuration.check()
        let endpoint = try configuration.endpoint()
        var http = HTTP2ClientConfiguration(host: endpoint.host, port: endpoint.port)
        http.extraCAFile = configuration.extraCAFile
        http.proxy = configuration.proxy
        http.maxConnections = configuration.maxConnections
        http.maxStreamsPerConnection = configuration.maxStreamsPerConnection
        http.requestTimeout = configuration.requestTimeout
        http.connectTimeout = configuration.connectTimeout
        http.idlePingInterval = configuration.idlePingInterval
        http.idleConnectionTimeout = configuration.idleConnectionTimeout
        // Only Retry-After is read from a response (the rest is in the body).
        http.keptResponseHeaders = ["retry-after"]
        var logger = logger
        logger[metadataKey: FCMLogKeys.project] = "\(configuration.serviceAccount.projectID)"
        self.tokens = try FCMAccessTokenSource(configuration: configuration, logger: logger, clock: clock)
        self.http = HTTP2Client(configuration: http, logger: logger)
        self.configuration = configuration
        self.sendPath = "/v1/projects/\(configuration.serviceAccount.projectID)/messages:send"
        self.logger = logger
        self.clock = clock
    }

    /// The service account's key file at `path`, sending to FCM (or to `url`, e.g. the sandbox).
    public convenience init(serviceAccountFile path: String, url: String? = nil, extraCAFile: String? = nil, logger: Logger) throws(FCMConfigurationError) {
        var configuration = try FCMConfiguration(serviceAccountFile: path, url: url)
        configuration.extraCAFile = extraCAFile
        try self.init(configuration: configuration, logger: logger)
    }

    public var statistics: TransportStatistics { TransportStatistics(http.statistics) }

    /// FCM names each message itself (`projects/<project>/messages/<id>`): events carry that name.
    public var carriesRequestIDs: Bool { false }

    /// The connections' capacity, lowered while FCM answers QUOTA_EXCEEDED (`FCMThrottle`).
    public var streamCapacity: Int {
        let capacity = http.streamCapacity
        return throttle.withLockedValue { $0.limit(capacity: capacity, now: clock.monotonic()) }
    }
    public func noteDemandHeldBack(_ heldBack: Bool) { http.noteDemandHeldBack(heldBack) }

    public var counters: FCMClientCounters {
        var snapshot = counterBox.withLockedValue { $0 }
        snapshot.throttleWindow = throttle.withLockedValue { $0.window }
        return snapshot
    }

    public func send(_ job: PushJob, to device: DeviceToken, requestID: String, completion: @escaping @Sendable (PushResult) -> Void) {
        let body = template(for: job).body(token: device.identity)
        tokens.withAccessToken { [self] token in
            switch token {
            case let .success(token): submit(body, token: token, completion: completion)
            case let .failure(error): completion(Self.result(for: error))
            }
        }
    }

    public func shutdown() async {
        await http.shutdown()
        await tokens.shutdown()
    }

    private func submit(_ body: [UInt8], token: String, completion: @escaping @Sendable (PushResult) -> Void) {
        http.send(headers: headers(for: token), path: sendPath, body: body) { [self] result in
            switch result {
            case let .success(response):
                let answer = FCMAnswer(status: response.status, body: response.body, retryAfterHeader: response.header("retry-after"),
                                       now: clock.unixSeconds())
                note(answer, token: token)
                completion(PushResult(status: answer.status, reason: answer.reason, requestID: answer.messageName,
                                      outcome: answer.outcome, retryAfter: answer.retryAfter))
            case let .failure(error):
                completion(PushResult(transportError: error))
            }
        }
    }

    /// Counts what uses up the quota, slows down on the project's 429s, and drops a refused token.
    private func note(_ answer: FCMAnswer, token: String) {
        if answer.status == 429 {
            if answer.isDeviceQuota {
                counterBox.withLockedValue { $0.deviceQuotaExceeded += 1 }
            } else {
                counterBox.withLockedValue { $0.projectQuotaExceeded += 1 }
                let capacity = http.streamCapacity
                throttle.withLockedValue { $0.quotaExceeded(capacity: capacity, now: clock.monotonic()) }
            }
        } else if (400...499).contains(answer.status) {
            counterBox.withLockedValue { $0.clientErrors += 1 }
        }
        if answer.asksForNewToken { tokens.rejected(token: token) }
    }

    private func template(for job: PushJob) -> FCMMessageTemplate {
        if let cached = cache.withLockedValue({ $0.job == job ? $0.template : nil }) { return cached }
        let template = FCMMessageTemplate(payload: job.payload, options: job.fcm, expiration: job.expiration, now: clock.unixSeconds())
        cache.withLockedValue {
            $0.job = job
            $0.template = template
        }
        return template
    }

    private func headers(for token: String) -> RequestHeaderBlock {
        if let cached = cache.withLockedValue({ $0.token == token ? $0.headers : nil }) { return cached }
        let block = http.sharedHeaders(method: "POST", headers: [
            HTTP2Header(name: "content-type", value: "application/json; charset=UTF-8"),
            // Never indexed: a bearer token stays out of every HPACK table on the way.
            HTTP2Header(name: "authorization", value: "Bearer \(token)", neverIndex: true),
        ])
        cache.withLockedValue {
            $0.token = token
            $0.headers = block
        }
        return block
    }

    /// No access token: the message was never sent.
    static func result(for error: FCMAccessTokenError) -> PushResult {
        if error.code == .refused {
            return PushResult(status: 0, reason: "AccessTokenRefused", outcome: .credentialsProblem(reason: error.message))
        }
        // Unreachable or failing: like an FCM outage, the device waits without losing an attempt.
        return PushResult(status: 0, reason: "AccessTokenUnavailable", outcome: .unavailable(reason: error.message))
    }
}

extension FCMAnswer {
    var asksForNewToken: Bool {
        if case .refreshCredentials = outcome { true } else { false }
    }
}
