/// Where a retryable device goes next: one delay queue per delay (TTL + dead-letter back to the job
/// queue), because a per-message TTL only expires at the head of a queue and a long delay would hold
/// up the short ones behind it.
public struct RetryPolicy: Sendable, Hashable {
    public var delays: [Duration]
    public var jobQueue: String

    public static let defaultDelays: [Duration] = [.seconds(1), .seconds(5), .seconds(30), .seconds(120), .seconds(600)]

    public init(delays: [Duration] = RetryPolicy.defaultDelays, jobQueue: String = "push.jobs") {
        self.delays = delays
        self.jobQueue = jobQueue
    }

    /// Total tries a device gets: the first one plus one per delay.
    public var maxAttempts: Int { delays.count + 1 }

    /// The delay queue for a job that has already been tried `attempts` times, or nil when the
    /// retries are used up.
    public func delayQueue(afterAttempts attempts: Int) -> (name: String, delay: Duration)? {
        guard attempts >= 1, attempts <= delays.count else { return nil }
        let delay = delays[attempts - 1]
        return (Self.queueName(for: delay, jobQueue: jobQueue), delay)
    }

    /// The delay queue for a device's `waits`-th wait on a service that is down: along the
    /// ladder, then its longest delay each time. nil without delay queues.
    public func delayQueue(forOutageWait waits: Int) -> (name: String, delay: Duration)? {
        delayQueue(afterAttempts: min(max(1, waits), delays.count))
    }

    /// The delay queue for the next try when the platform asked for at least `minimum` (its
    /// `Retry-After`): the ladder's own delay, or the shortest declared delay that is long enough,
    /// or the longest one when none is. nil when the retries are used up.
    public func delayQueue(afterAttempts attempts: Int, atLeast minimum: Duration?) -> (name: String, delay: Duration)? {
        guard let ladder = delayQueue(afterAttempts: attempts) else { return nil }
        guard let minimum, ladder.delay < minimum, let longest = delays.max() else { return ladder }
        let delay = delays.filter { $0 >= minimum }.min() ?? longest
        return (Self.queueName(for: delay, jobQueue: jobQueue), delay)
    }

    public var queueNames: [(name: String, delay: Duration)] {
        delays.map { (Self.queueName(for: $0, jobQueue: jobQueue), $0) }
    }

    static func queueName(for delay: Duration, jobQueue: String) -> String {
        // Named after the delay: a queue's TTL cannot change once declared, so a new delay is a new queue.
        "\(jobQueue).retry.\(DurationText.format(delay))"
    }
}
