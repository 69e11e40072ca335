import PushCore

/// One app's way to a push platform (APNs, FCM, Web Push). Delivery rounds, settlement, retries,
/// the configuration breaker and the in-flight budget use only this, never a platform's client.
public protocol PushTransport: AnyObject, Sendable {
    /// Sends `job`'s notification to one device. `requestID` is the id the worker gave the request
    /// (`RequestIDRange`); a platform that names messages itself answers with its own. It never
    /// throws: every failure is a `PushResult`. `completion` runs on an I/O thread: keep it short.
    func send(_ job: PushJob, to device: DeviceToken, requestID: String, completion: @escaping @Sendable (PushResult) -> Void)

    /// Whether the platform carries the worker's request ids and names each message by it (APNs'
    /// `apns-id`): events then name them `apns_id` too, and job.completed names the job's range.
    /// False where the platform names messages itself (FCM, Web Push): events carry its name.
    var carriesRequestIDs: Bool { get }

    /// Requests the platform lets the app's connections have in flight now.
    var streamCapacity: Int { get }
    /// Whether the worker holds notifications back because the apps' `streamCapacity` is full (not
    /// its own `--max-in-flight`): a transport that paces its capacity may then raise it.
    func noteDemandHeldBack(_ heldBack: Bool)
    var statistics: TransportStatistics { get }
    /// Credentials put in use since the transport started: new provider tokens (APNs token auth,
    /// FCM access tokens); 0 where the platform has none to renew.
    var credentialRenewals: Int { get }

    /// Whether a failure's reason is a word of a known service's own small vocabulary (APNs',
    /// FCM's), fit for a metric label. False where anyone can write it (a Web Push subscription
    /// names its own server): the metric then says the HTTP status, or the worker's own reason.
    var failureReasonsAreLabels: Bool { get }

    /// The results that asked for new credentials (`asksForNewCredentials`): renews them once and
    /// resends those devices through `resend` (given their indices), putting the answers in place.
    /// A device that cannot be helped becomes a credentials problem. Returns how many were resent.
    func renewCredentialsAndResend(_ results: inout [PushResult], resend: ([Int]) async -> [PushResult]) async -> Int

    /// What `result` says about the configuration, for the breaker. `job`: the job it answered.
    func configurationFit(of result: PushResult, job: PushJob) -> ConfigurationFit

    func shutdown() async
}

extension PushTransport {
    public func noteDemandHeldBack(_ heldBack: Bool) {}
    public var credentialRenewals: Int { 0 }
    public var failureReasonsAreLabels: Bool { true }
}
