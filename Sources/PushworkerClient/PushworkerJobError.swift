/// A job the builders cannot write as the worker would read it: `field` is the job's JSON path
/// at fault (`tokens`, `payload.aps.badge`, `x-trace`), as the worker's `job.rejected` names it.
public struct PushworkerJobError: Error, Sendable, Hashable, CustomStringConvertible {
    public let field: String
    public let problem: String

    public init(field: String, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { "\(field): \(problem)" }
}
