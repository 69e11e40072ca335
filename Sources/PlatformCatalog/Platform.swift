import APNsCore
import FCMCore
import PushCore
import WebPushCore

/// The platforms the worker speaks, by the name a configuration file, a `--platform` option and
/// the gateway give them, and what a job or device of each one is (its `PlatformJobRules`). The one
/// place that lists them: the worker, the gateway and the operators' commands read it, so that a
/// new platform is added here and in its own modules.
public enum Platform: String, Sendable, CaseIterable, Hashable {
    case apns, fcm, webpush

    /// What a job and a device of this platform are: its fields, its options, its token syntax.
    public var jobRules: any PlatformJobRules {
        switch self {
        case .apns: APNsJobRules()
        case .fcm: FCMJobRules()
        case .webpush: WebPushJobRules()
        }
    }

    /// Every platform's rules, for a parser that takes jobs of any app.
    public static var allJobRules: [any PlatformJobRules] { allCases.map(\.jobRules) }

    /// "apns, fcm or webpush": the choices, for an error that names them.
    public static var choices: String {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}
