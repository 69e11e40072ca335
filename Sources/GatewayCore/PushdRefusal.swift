/// Why a pushd packet cannot be taken, naming the member at fault (`groups[2]`, `payload.aps`).
public struct PushdRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The packet's member, or nil for the packet as a whole.
    public let field: String?
    public let problem: String

    public init(field: String?, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    /// `field: problem`, or the problem alone.
    public var message: String { field.map { "\($0): \(problem)" } ?? problem }

    public var description: String { message }
}
