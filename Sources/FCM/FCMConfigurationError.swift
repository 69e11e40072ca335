/// A configuration or credentials problem found before anything is sent. `field` is the setting or
/// the service-account JSON member at fault; the message never holds the private key.
public struct FCMConfigurationError: Error, Sendable, CustomStringConvertible {
    public let field: String?
    public let problem: String

    public init(field: String?, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { field.map { "\($0): \(problem)" } ?? problem }
}
