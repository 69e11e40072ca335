/// A pushd registration packet: add `device` to `group`.
public struct PushdRegistration: Sendable, Hashable {
    /// The device token in lowercase hex.
    public let device: String
    public let group: String

    public init(device: String, group: String) {
        self.device = device
        self.group = group
    }
}
