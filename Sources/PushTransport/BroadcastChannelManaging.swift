/// A transport whose platform has broadcast channels (APNs' Live Activity channels): the worker
/// carries out channel-operation jobs through it, with the app's own credentials and connection
/// settings.
public protocol BroadcastChannelManaging: Sendable {
    /// A new channel's id.
    func createChannel(storagePolicy: Int) async throws(ChannelManagementError) -> String
    func deleteChannel(_ id: String) async throws(ChannelManagementError)
    /// Whether `text` is a channel id of the platform, before it goes into a request.
    func isChannelID(_ text: String) -> Bool
}

/// The platform's refusal of a channel operation, or no answer (`status` 0).
public struct ChannelManagementError: Error, Sendable, CustomStringConvertible {
    public let status: Int
    public let reason: String
    public let description: String

    public init(status: Int, reason: String, description: String) {
        self.status = status
        self.reason = reason
        self.description = description
    }

    /// The platform said it did not do it, and may later: busy or failing (429, 5xx).
    public var isRetryable: Bool { status == 429 || (500...599).contains(status) }
}
