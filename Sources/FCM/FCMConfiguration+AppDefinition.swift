import FCMCore
import Logging
import PushCore
import PushTransport

/// An FCM app as the worker serves it: jobs read by FCM's rules, sent by an `FCMClient`.
extension FCMConfiguration: AppDefinition {
    public var jobRules: any PlatformJobRules { FCMJobRules() }

    public func makeTransport(logger: Logger) throws(TransportSetupError) -> any PushTransport {
        do {
            return try FCMClient(configuration: self, logger: logger)
        } catch {
            throw TransportSetupError(error.description)
        }
    }
}
