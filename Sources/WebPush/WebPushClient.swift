import HTTP2
import Logging
import NIOConcurrencyHelpers
import PushCore
import PushTransport
import WebPushCore
import HTTP2Transport

/// Sends one app's Web Push messages: each device is a subscription; its message is encrypted for
/// it (RFC 8291), signed for with the app's VAPID key (RFC 8292), and posted to its endpoint through
/// that push service's pool. Never throws per message: every failure is a `PushResult`.
public final class WebPushClient: PushTransport {
    public let configuration: WebPushConfiguration
    private let pools: WebPushOriginPools
    private let encryptors = WebPushEncryptorPool()
    private let vapid: VAPIDTokenCache
    /// What a VAPID refusal tells the operator to check; made once, not per message.
    private let credentialsHint: String
    private let endpointRule: WebPushEndpointRule
    private let judge: NIOLockedValueBox<WebPushRefusalJudge>
    private let delivered = NIOLockedValueBox(DeliveredServices())
    private let logger: Logger

    public init(configuration: WebPushConfiguration, logger: Logger) {
        self.configuration = configuration
        self.pools = WebPushOriginPools(configuration: configuration, logger: logger)
        self.vapid = VAPIDTokenCache(key: configuration.vapidKey, subject: configuration.subject)
        self.credentialsHint = configuration.credentialsHint
        self.endpointRule = WebPushEndpointRule(configuration)
        self.judge = NIOLockedValueBox(WebPushRefusalJudge(trusted: configuration.trustedPushServices))
        self.logger = logger
    }

    public var streamCapacity: Int { pools.streamCapacity }
    public func noteDemandHeldBack(_ heldBack: Bool) { pools.noteDemandHeldBack(heldBack) }
    public var statistics: TransportStatistics { TransportStatistics(pools.statistics) }
    /// A push service names each message by its `Location`.
    public var carriesRequestIDs: Bool { false }
    /// A subscription names its own server, and the server writes its own reasons: not labels.
    public var failureReasonsAreLabels: Bool { false }
    /// Push-service origins with a pool now.
    public var origins: Int { pools.origins }
    /// Pools shutting down whose I/O threads have not exited yet.
    public var closingPools: Int { pools.closingPools }

    public func send(_ job: PushJob, to device: DeviceToken, requestID: String, completion: @escaping @Sendable (PushResult) -> Void) {
        let now = UnixTime.now().seconds
        let requestedTTL = WebPushRequestHeaders.ttl(expiration: job.expiration, now: now)
        let origin: WebPushEndpointOrigin
        let body: [UInt8]
        let headers: [HTTP2Header]
        do throws(WebPushError) {
            // The job's parser checked the subscription; read again here from its identity, the
            // compact form the parser wrote (cheaper than the JSON a job may have given), which
            // also survives a retry or a chunk job.
            let subscription: WebPushSubscription
            do { subscription = try WebPushSubscription(text: device.identity) } catch {
                throw WebPushError(.invalidSubscriptionKey, field: error.field, error.problem)
            }
            origin = try WebPushEndpointOrigin(endpoint: subscription.endpoint)
            if let refusal = endpointRule.refusal(of: origin) {
                completion(PushResult(status: 0, reason: "EndpointNotAllowed", outcome: .permanentFailure(reason: "EndpointNotAllowed: \(refusal)")))
                return
            }
            let keys = try WebPushSubscriptionKeys(subscription)
            body = try encryptors.withEncryptor { (encryptor) throws(WebPushError) in try encryptor.encrypt(job.payload, for: keys) }
            headers = WebPushRequestHeaders.fields(options: job.webPush, expiration: job.expiration, now: now,
                                                   authorization: try vapid.authorizationHeader(for: origin))
        } catch {
            completion(Self.unsendable(error, hint: credentialsHint))
            return
        }
        let pool: WebPushOriginPool
        switch pools.acquire(origin) {
        case .success(let acquired):
            pool = acquired
        case .failure(.shutDown):
            completion(PushResult(transportError: HTTP2Error(code: .shutdown, message: "the Web Push client is shut down")))
            return
        case .failure(.originsFull(let bound)):
            // The device is not to blame, but neither is it held: an origin that never frees a
            // slot must end in delivery.failed along the ladder, not wait forever.
            let reason = "TooManyOrigins: all \(bound) push-service pools (max_origins) have messages in flight; \(origin) waits for one"
            completion(PushResult(status: 0, reason: "TooManyOrigins", outcome: .retryable(reason: reason)))
            return
        }
        let path = WebPushEndpointOrigin.path(of: device.identity)
        let pools = pools, hint = credentialsHint, judge = judge, subscription = device.identity, delivered = delivered
        Self.post(body, headers: headers, path: path, origin: origin, over: pool, pools: pools) { result in
            pools.finished(origin)
            switch result {
            case let .success(response):
                switch WebPushAnswer.read(status: response.status, headers: response.headers, body: response.body,
                                          now: UnixTime.now().seconds, requestedTTL: requestedTTL) {
                case let .result(answer):
                    if answer.outcome == .sent {
                        let now = ContinuousClock.now
                        judge.withLockedValue { $0.accepted(origin, at: now) }
                        delivered.withLockedValue { $0.delivered(origin, at: now) }
                        completion(answer)
                    } else {
                        completion(Self.outage(answer, origin: origin, delivered: delivered))
                    }
                case let .refusal(refusal):
                    let verdict = judge.withLockedValue { $0.refused(origin, subscription: subscription, at: .now) }
                    completion(Self.result(refusal, verdict: verdict, origin: origin, hint: hint))
                }
            case let .failure(error):
                completion(Self.outage(Self.result(transportError: error, origin: origin), origin: origin, delivered: delivered))
            }
        }
    }

    /// Posts one message over the origin's pool. A service that turns out not to offer HTTP/2
    /// (no `h2` in ALPN) never saw the request: the origin is served over HTTP/1.1 from then on,
    /// and this message goes there at once, using none of the device's attempts.
    private static func post(_ body: [UInt8], headers: [HTTP2Header], path: String, origin: WebPushEndpointOrigin, over pool: WebPushOriginPool,
                             pools: WebPushOriginPools, answer: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void) {
        switch pool {
        case .http1(let http1):
            http1.send(path: path, headers: headers, body: body, completion: answer)
        case .http2(let client):
            client.send(headers: client.sharedHeaders(method: "POST", headers: headers), path: path, body: body) { result in
                guard case .failure(let error) = result, error.code == .http2NotOffered else { return answer(result) }
                switch pools.useHTTP1(origin) {
                case .success(let http1):
                    post(body, headers: headers, path: path, origin: origin, over: http1, pools: pools, answer: answer)
                case .failure:
                    answer(.failure(HTTP2Error(code: .shutdown, message: "the Web Push client is shut down")))
                }
            }
        }
    }

    /// A refused VAPID token, as `WebPushRefusalJudge` reads it: the app's credentials (held, the
    /// app pauses); the subscription's own, where its service accepts this app's messages (gone
    /// for good when it was made with another key, else this message failed); or not yet known,
    /// which retries the device along the ladder (an attempt used) and never holds it untouched.
    static func result(_ refusal: WebPushAnswer.Refusal, verdict: WebPushRefusalJudge.Verdict, origin: WebPushEndpointOrigin,
                       hint: String) -> PushResult {
        let reason = refusal.reason
        switch verdict {
        case let .app(evidence):
            return PushResult(status: refusal.status, reason: reason, outcome: .credentialsProblem(
                reason: "the push services refused the VAPID credentials (\(evidence); last HTTP \(refusal.status) \(reason)): check \(hint)"))
        case .subscription(confirmed: true):
            return PushResult(status: refusal.status, reason: reason,
                              outcome: refusal.keyMismatch ? .tokenInvalid(reason: reason) : .permanentFailure(reason: reason))
        case .subscription(confirmed: false):
            return PushResult(status: refusal.status, reason: reason, outcome: .retryable(
                reason: "\(reason) (HTTP \(refusal.status) from \(origin), which accepted none of this app's messages lately)"))
        }
    }

    /// A retryable failure of a service that has delivered for this app (no connection, a timeout,
    /// 5xx): an outage, which its devices wait out without using attempts. Else as it was.
    static func outage(_ result: PushResult, origin: WebPushEndpointOrigin, delivered: NIOLockedValueBox<DeliveredServices>) -> PushResult {
        guard case let .retryable(reason) = result.outcome, result.status == 0 || (500...599).contains(result.status),
              delivered.withLockedValue({ $0.hasDelivered(origin, at: .now) }) else { return result }
        var result = result
        result.outcome = .serviceDown(reason: reason)
        return result
    }

    /// A message that cannot be made: a subscription the encryption refuses (a p256dh off the
    /// curve) is the device's; a VAPID key that cannot sign is the app's.
    static func unsendable(_ error: WebPushError, hint: String) -> PushResult {
        switch error.code {
        case .invalidSubscriptionKey, .invalidEndpoint:
            return PushResult(status: 0, reason: "InvalidSubscription", outcome: .tokenInvalid(reason: "InvalidSubscription: \(error.message)"))
        case .payloadTooLarge:
            return PushResult(status: 0, reason: "PayloadTooLarge", outcome: .permanentFailure(reason: "PayloadTooLarge: \(error.message)"))
        default:
            return PushResult(status: 0, reason: "VAPIDSigningFailed",
                              outcome: .credentialsProblem(reason: "cannot sign the VAPID token (\(error.message)): check \(hint)"))
        }
    }

    /// No answer from one push service. Unlike APNs, Web Push has no one service whose outage all
    /// devices wait out: each subscription names its own, and one that is gone for good must not
    /// hold its devices forever. So nothing pauses the app, and the device is retried along the
    /// ladder; `outage` then lets the devices of a service that has delivered wait without using
    /// attempts.
    static func result(transportError error: HTTP2Error, origin: WebPushEndpointOrigin) -> PushResult {
        var result = PushResult(transportError: error)
        if error.code == .addressNotAllowed {
            result.outcome = .permanentFailure(reason: "EndpointNotAllowed: \(error.message) (allow_private_endpoints is off)")
            return result
        }
        switch result.outcome {
        case let .unavailable(reason), let .credentialsProblem(reason):
            result.outcome = .retryable(reason: "\(origin): \(reason)")
        default:
            break
        }
        return result
    }

    /// Web Push has no credentials that expire in use: the VAPID tokens are renewed before they
    /// run out, so no answer asks for new ones.
    public func renewCredentialsAndResend(_ results: inout [PushResult], resend: ([Int]) async -> [PushResult]) async -> Int { 0 }

    /// A refusal judged the app's (`WebPushRefusalJudge`) is the configuration's; any other answer
    /// is the subscription's own.
    public func configurationFit(of result: PushResult, job: PushJob) -> ConfigurationFit {
        guard result.status != 0 else { return .unknown }
        if case let .credentialsProblem(reason) = result.outcome { return .misconfigured(reason: reason) }
        return .fits
    }

    public func shutdown() async {
        await pools.shutdown()
    }
}
