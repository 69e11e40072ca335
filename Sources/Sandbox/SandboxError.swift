/// A sandbox that cannot start: unreadable material, a port in use, a bad key.
public struct SandboxError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { "sandbox: \(self.message)" }

    init(message: String) {
        self.message = message
    }
}
