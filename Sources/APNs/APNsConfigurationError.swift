/// A configuration or credentials problem found before anything is sent.
public struct APNsConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
