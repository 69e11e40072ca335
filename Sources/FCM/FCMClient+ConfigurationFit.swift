import FCMCore
import PushCore
import PushTransport

/// SENDER_ID_MISMATCH is one token of another Firebase project, or the app's mistake when many say
/// so (the worker's breaker counts them); so is a NOT_FOUND without an FcmError detail, which FCM
/// answers for a project it does not know. THIRD_PARTY_AUTH_ERROR can only be the configuration.
extension FCMClient {
    public func configurationFit(of result: PushResult, job: PushJob) -> ConfigurationFit {
        guard result.status != 0 else { return .unknown }
        guard let reason = result.reason else { return .fits }
        switch reason {
        case FCMErrorCode.senderIDMismatch.rawValue:
            return .mismatch(suspect: "wrong Firebase project? FCM answered SENDER_ID_MISMATCH", check: "the service account's project_id")
        case "NOT_FOUND":
            return .mismatch(suspect: "wrong Firebase project? FCM answered NOT_FOUND for the send URL", check: "the service account's project_id")
        case FCMErrorCode.thirdPartyAuthError.rawValue:
            return .misconfigured(reason: "FCM answered THIRD_PARTY_AUTH_ERROR: the APNs key or certificate (or Web Push key) in the Firebase project \(configuration.serviceAccount.projectID) is missing or invalid")
        default:
            return .fits
        }
    }
}
