/// Why a job cannot be sent, naming the field and the problem so the publisher can fix it.
public struct JobRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The JSON field at fault (`tokens[3]`, `payload.aps`), or nil for the message as a whole.
    public let field: String?
    public let problem: String

    public init(field: String?, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String {
        guard let field else { return problem }
        return "\(field): \(problem)"
    }
}
