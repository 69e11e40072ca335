import AMQP

/// What `dead replay` / `dead drop` does with one message of the dead queue: the plan, apart
/// from the broker so that it can be tested alone.
public enum DeadDecision: Sendable, Equatable {
    /// Not selected: it goes back to its place in the dead queue.
    case leave
    /// Publish this copy to the job queue; the dead one is acked once the copy is confirmed.
    case replay(AMQPProperties)
    /// Selected, but only the first 64 KiB of the job were kept: a replay would publish a broken
    /// job. It stays in the dead queue.
    case keepTruncated
    case drop

    public enum Operation: Sendable {
        case replay, drop
    }

    public init(_ letter: DeadLetter, properties: AMQPProperties, selection: DeadSelection, operation: Operation) {
        guard selection.includes(letter) else {
            self = .leave
            return
        }
        switch operation {
        case .drop: self = .drop
        case .replay: self = letter.truncatedFrom == nil ? .replay(ReplayCopy.properties(from: properties)) : .keepTruncated
        }
    }
}
