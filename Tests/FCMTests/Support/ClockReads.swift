import Synchronization

/// Counts the reads of a test's wall clock, so that it can change between them.
final class ClockReads: Sendable {
    private let count = Atomic(0)

    /// How many reads came before this one.
    func next() -> Int { count.add(1, ordering: .relaxed).oldValue }
}
