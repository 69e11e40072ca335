import PlatformCatalog
import PushCore

/// The `--platform` of the group commands: which rules say what a device of the app is.
public typealias DevicePlatform = Platform

extension Platform {
    /// The option's value, or an error that names the option and the choices.
    public init(option value: String) throws(OperationError) {
        guard let platform = Platform(rawValue: value) else {
            throw OperationError("--platform must be \(Platform.choices), got \"\(value)\"")
        }
        self = platform
    }

    public var rules: any PlatformJobRules { jobRules }
}
