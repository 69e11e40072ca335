/// A problem an operator can act on, said in one line that names the option, field or queue.
public struct OperationError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
