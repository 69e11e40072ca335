/// A relayed Web Push message as a Pushworker job: publish `body` (the job JSON) to the app the
/// environment names.
public struct RelayJob: Sendable, Hashable {
    public let environment: RelayEnvironment
    /// The device token in lowercase hex, as the job names it.
    public let token: String
    /// The job JSON (README "The job").
    public let body: [UInt8]

    public init(environment: RelayEnvironment, token: String, body: [UInt8]) {
        self.environment = environment
        self.token = token
        self.body = body
    }
}
