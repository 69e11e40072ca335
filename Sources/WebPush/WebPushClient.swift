import HTTP2
import Logging
import PushCore
import PushTransport
import WebPushCore

/// Sends one app's Web Push messages: each device is a subscription; its message is encrypted for
/// it (RFC 8291), signed for with the app's VAPID key (RFC 8292), and posted to its endpoint through
/// that push service's pool. Never throws per message: every failure is a `PushResult`.
public final class WebPushClient: PushTransport {
    public let configuration: WebPushConfiguration
    private let pools: WebPushOriginPools
    private let encryptors = WebPushEncryptorPool()
    private let vapid: VAPIDTokenCache
    private let logger: Logger

    public init(configuration: WebPushConfiguration, logger: Logger) {
        self.configuration = configuration
        self.pools = WebPushOriginPools(configuration: configuration, logger: logger)
        self.vapid = VAPIDTokenCache(key: configuration.vapidKey, subject: configuration.subject)
        self.logger = logger
    }

    public var streamCapacity: Int { pools.streamCapacity }
    public var statistics: HTTP2ClientStatistics { pools.statistics }
    /// A push service names each message by its `Location`.
    public var carriesRequestIDs: Bool { false }
    /// Push-service origins with a pool now.
    public var origins: Int { pools.origins }

    public func send(_ job: PushJob, to device: DeviceToken, requestID: String, completion: @escaping @Sendable (PushResult) -> Void) {
        let now = UnixTime.now().seconds
        let origin: WebPushEndpointOrigin
        let body: [UInt8]
        let headers: [HTTP2Header]
        do throws(WebPushError) {
            // The job's parser checked the subscription; read again here from the form the job
            // carries (`given`), which also survives a retry or a chunk job.
            let subscription: WebPushSubscription
            do { subscription = try WebPushSubscription(text: device.given) } catch {
                throw WebPushError(.invalidSubscriptionKey, field: error.field, error.problem)
            }
            origin = try WebPushEndpointOrigin(endpoint: subscription.endpoint)
            let keys = try WebPushSubscriptionKeys(subscription)
            body = try encryptors.withEncryptor { (encryptor) throws(WebPushError) in try encryptor.encrypt(job.payload, for: keys) }
            headers = WebPushRequestHeaders.fields(options: job.webPush, expiration: job.expiration, now: now,
                                                   authorization: try vapid.authorizationHeader(for: origin))
        } catch {
            completion(Self.unsendable(error, hint: configuration.credentialsHint))
            return
        }
        guard let client = pools.acquire(origin) else {
            completion(PushResult(transportError: HTTP2Error(code: .shutdown, message: "the Web Push client is shut down")))
            return
        }
        let path = WebPushEndpointOrigin.path(of: device.identity)
        let pools = pools, hint = configuration.credentialsHint
        client.send(headers: client.sharedHeaders(method: "POST", headers: headers), path: path, body: body) { result in
            pools.finished(origin)
            switch result {
            case let .success(response):
                completion(WebPushAnswer.result(status: response.status, headers: response.headers, body: response.body,
                                                vapid: hint, now: UnixTime.now().seconds))
            case let .failure(error):
                completion(PushResult(transportError: error))
            }
        }
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

    /// Web Push has no credentials that expire in use: the VAPID tokens are renewed before they
    /// run out, so no answer asks for new ones.
    public func renewCredentialsAndResend(_ results: inout [PushResult], resend: ([Int]) async -> [PushResult]) async -> Int { 0 }

    /// A refused VAPID key or subject can only be the configuration's; any other answer is the
    /// subscription's own.
    public func configurationFit(of result: PushResult, job: PushJob) -> ConfigurationFit {
        guard result.status != 0 else { return .unknown }
        if case let .credentialsProblem(reason) = result.outcome { return .misconfigured(reason: reason) }
        return .fits
    }

    public func shutdown() async {
        await pools.shutdown()
    }
}
