/// What one answer of a push platform means for the device it was sent to. Each platform's module
/// maps its answers onto these (APNsCore: `DeliveryOutcome(apnsStatus:reason:)`).
public enum DeliveryOutcome: Sendable, Hashable {
    /// Accepted by the platform.
    case sent
    /// The token is dead for this app and environment: applications should delete it.
    case tokenInvalid(reason: String)
    /// Retrying cannot help (a malformed request, a payload the platform refuses).
    case permanentFailure(reason: String)
    /// Worth trying again later (throttling, trouble at the platform, a lost connection).
    case retryable(reason: String)
    /// The platform never processed the request (no connection could be made, the stream was
    /// refused, or it timed out before it was sent): an outage, not the device's fault. The device
    /// waits for the platform without using up one of its attempts.
    case unavailable(reason: String)
    /// One of the many services an app sends to is down (Web Push: each subscription names its
    /// own), one that has delivered for this app before: the device waits in the delay queues
    /// without using an attempt, at most `PushJob.maximumOutageWaits` times, while the app's other
    /// devices go on. A service that never delivered gets `retryable` instead, so a hostile or
    /// dead one ends in delivery.failed along the ladder.
    case serviceDown(reason: String)
    /// The credentials are stale (an expired token the provider signs): renew them, then retry once.
    case refreshCredentials(reason: String)
    /// The credentials or configuration are wrong; the device is not to blame, the job must wait.
    case credentialsProblem(reason: String)
}
