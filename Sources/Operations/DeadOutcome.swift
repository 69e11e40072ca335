/// What a `dead replay` or `dead drop` did.
public struct DeadOutcome: Sendable, Equatable {
    /// Messages looked at (at most those in the dead queue when it began).
    public var scanned = 0
    /// Selected ones.
    public var matched = 0
    /// Replayed: the copy confirmed in the job queue and the dead one acked. For a dry run,
    /// those that would be.
    public var moved = 0
    public var dropped = 0
    /// Selected but cut to 64 KiB: left in the dead queue.
    public var truncated: [DeadLetter] = []
    /// Copies confirmed in the job queue whose dead original could not be acked (the channel
    /// closed in between): they are in both queues now, and the job may be sent twice.
    public var copiedTwice = 0
    /// Why the run stopped early, if it did; everything not moved is back in the dead queue.
    public var failure: String?

    public init() {}
}
