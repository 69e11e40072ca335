import APNsCore

/// A channel-management request that did not succeed: APNs' status and reason, or what kept the
/// request from being answered (status 0).
public struct APNsChannelError: Error, Sendable, CustomStringConvertible {
    public let status: Int
    public let reason: String
    /// The `apns-request-id` of the answer, for Apple's support.
    public let requestID: String?

    public init(status: Int, reason: String, requestID: String? = nil) {
        self.status = status
        self.reason = reason
        self.requestID = requestID
    }

    public var description: String {
        let answer = status == 0 ? reason : "APNs answered \(status) \(reason)"
        let hint = switch APNsReason(rawValue: reason) {
        case .featureNotEnabled: ": enable Broadcast Capability for the App ID in the developer account"
        case .channelNotRegistered: ": no such channel for this app and environment"
        case .cannotCreateChannelConfig: ": APNs could not make the channel's configuration; check the storage policy and the app's environment"
        default: ""
        }
        return answer + hint + (requestID.map { " (apns-request-id \($0))" } ?? "")
    }
}
