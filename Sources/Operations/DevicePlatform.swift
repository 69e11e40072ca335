import APNsCore
import FCMCore
import PushCore
import WebPushCore

/// The `--platform` of the group commands: which rules say what a device of the app is.
public enum DevicePlatform: String, Sendable, CaseIterable {
    case apns, fcm, webpush

    /// The option's value, or an error that names the option and the choices.
    public init(option value: String) throws(OperationError) {
        guard let platform = DevicePlatform(rawValue: value) else {
            throw OperationError("--platform must be apns, fcm or webpush, got \"\(value)\"")
        }
        self = platform
    }

    public var rules: any PlatformJobRules {
        switch self {
        case .apns: APNsJobRules()
        case .fcm: FCMJobRules()
        case .webpush: WebPushJobRules()
        }
    }
}
