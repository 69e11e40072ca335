/// An app's client could not be made (its credentials, its URL): the worker does not start, and a
/// reload changes nothing.
public struct AppSetupError: Error, Sendable, CustomStringConvertible {
    public let app: String
    public let problem: String

    public init(app: String, _ problem: String) {
        self.app = app
        self.problem = problem
    }

    public var message: String { "app \(app): \(problem)" }
    public var description: String { message }
}
