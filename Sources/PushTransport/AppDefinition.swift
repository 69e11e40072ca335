import Logging
import PushCore

/// One app of the configuration, whatever its platform: what the worker needs to serve it. Each
/// platform's module makes its configuration one (`APNsConfiguration`, `FCMConfiguration`,
/// `WebPushConfiguration`), so the worker takes `[String: any AppDefinition]` and names no platform.
public protocol AppDefinition: Sendable {
    /// How the app's jobs and devices read; its `platformName` is the app's platform.
    var jobRules: any PlatformJobRules { get }
    /// `prune_invalid_tokens`: a token the platform calls invalid leaves the job's groups.
    var pruneInvalidTokens: Bool { get }
    /// A new client for the app (its connections and credentials), or the problem that keeps it
    /// from being made (an unreadable key, a bad URL), in words that name the setting.
    func makeTransport(logger: Logger) throws(TransportSetupError) -> any PushTransport
}

/// Why an app's client could not be made: the message names the setting and the problem.
public struct TransportSetupError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
