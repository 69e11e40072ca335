import APNsCore
import Logging
import PushCore
import PushTransport

/// An APNs app as the worker serves it: jobs read by APNs' rules (token authentication decides
/// which push types a job may name), sent by an `APNsClient`.
extension APNsConfiguration: AppDefinition {
    public var jobRules: any PlatformJobRules {
        APNsJobRules(tokenAuthentication: usesTokenAuthentication, pushTypeRules: pushTypeRules)
    }

    public func makeTransport(logger: Logger) throws(TransportSetupError) -> any PushTransport {
        do {
            return try APNsClient(configuration: self, logger: logger)
        } catch {
            throw TransportSetupError(error.message)
        }
    }
}
