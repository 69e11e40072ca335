import Logging
import PushCore
import PushTransport
import WebPushCore

/// A Web Push app as the worker serves it: jobs read by Web Push's rules, sent by a
/// `WebPushClient` (which makes no connection until a subscription names a push service).
extension WebPushConfiguration: AppDefinition {
    public var jobRules: any PlatformJobRules { WebPushJobRules() }

    public func makeTransport(logger: Logger) throws(TransportSetupError) -> any PushTransport {
        WebPushClient(configuration: self, logger: logger)
    }
}
