import APNsCore
import PushCore
import PushTransport

/// A wrong environment makes APNs answer `BadDeviceToken` for every device, a wrong topic
/// `DeviceTokenNotForTopic`: each is one dead device, or the app's mistake when many say so (the
/// worker's breaker counts them). `BadTopic`, `TopicDisallowed` and `MissingTopic` can only be the
/// configuration's, unless the job chose its own topic (then they are that job's failure).
extension APNsClient {
    public func configurationFit(of result: PushResult, job: PushJob) -> ConfigurationFit {
        guard result.status != 0 else { return .unknown }   // no answer: says nothing about the configuration
        // Accepted (no reason): a plain answer, without hashing "" into three sets.
        guard let reason = result.reason else { return .fits }
        if job.apns.topic == nil, Self.topicReasons.contains(reason) {
            return .misconfigured(reason: "environment or topic mismatch? APNs answered \(reason): the topic does not fit these credentials (check --apns-topic)")
        }
        if Self.environmentReasons.contains(reason) {
            return .misconfigured(reason: "environment or topic mismatch? APNs answered \(reason): the key or certificate belongs to the other environment (check --apns-environment)")
        }
        if Self.mismatchReasons.contains(reason) {
            return .mismatch(suspect: "environment or topic mismatch? APNs answered \(reason)", check: "check --apns-environment and --apns-topic")
        }
        return .fits
    }

    static let mismatchReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic"]
    static let topicReasons: Set<String> = ["BadTopic", "TopicDisallowed", "MissingTopic"]
    /// Already credentials problems (PushCore maps them so); named for what they mean.
    static let environmentReasons: Set<String> = ["BadEnvironmentKeyIdInToken", "BadEnvironmentKeyInToken", "BadCertificateEnvironment"]
}
