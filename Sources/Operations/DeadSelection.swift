/// Which dead-lettered jobs a `dead replay` or `dead drop` is about: all of them, or those whose
/// id (or, without a job id in the body, message id) is one of `ids`.
public enum DeadSelection: Sendable, Equatable {
    case all
    case ids(Set<String>)

    /// From the command line: `--all` or at least one `--id`, never both.
    public init(ids: [String], all: Bool) throws(OperationError) {
        switch (ids.isEmpty, all) {
        case (true, true): self = .all
        case (false, false): self = .ids(Set(ids))
        case (false, true): throw OperationError("give --id ID or --all, not both")
        case (true, false): throw OperationError("give --id ID (repeatable) or --all")
        }
    }

    public func includes(_ letter: DeadLetter) -> Bool {
        switch self {
        case .all: true
        case .ids(let ids): letter.id.map(ids.contains) ?? false
        }
    }
}
