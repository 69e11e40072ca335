/// What APNs keeps of a broadcast channel's messages for devices that are offline (Apple, "Sending
/// channel management requests to APNs", `message-storage-policy`): nothing, or the most recent
/// message. A broadcast to a channel that stores nothing must carry `apns-expiration: 0`.
public enum APNsChannelStoragePolicy: Int, Sendable, CaseIterable, Hashable {
    case noStorage = 0
    case mostRecentMessage = 1
}
