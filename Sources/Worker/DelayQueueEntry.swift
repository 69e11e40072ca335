import AMQP
import PushCore

/// A retry (or a deferred job) waiting in the quorum delay queue: when it is due and which lane it
/// goes back to, carried in its headers. With quorum queues the retry ladder does not use
/// TTL + dead-letter queues: RabbitMQ 3.10's at-least-once dead-lettering out of a quorum queue
/// can stall for 180 s (`dead_letter_worker_publisher_confirm_timeout`) when the leader of the
/// target queue dies, and at-most-once dead-lettering may drop the message. Instead a worker
/// consumes the delay queue, holds each message unacked until it is due, publishes it to its lane
/// with a confirm, and acks it only then (`DelayQueueRelease`): a node loss or a worker crash
/// returns it to the delay queue, where the next holder waits for the same due time.
struct DelayQueueEntry: Equatable, Sendable {
    static let dueHeader = "x-pushworker-due"
    static let laneHeader = "x-pushworker-lane"
    /// Headers that describe this stay in the delay queue, not the job: gone from the released copy.
    static let bookkeepingHeaders = [dueHeader, laneHeader, "x-delivery-count"]

    /// Milliseconds since the Unix epoch: the workers' clocks decide, so they should be in sync
    /// (NTP); a skew of a second moves a retry by a second.
    let due: UnixTime
    /// The queue the job goes back to.
    let lane: String

    /// Marks `properties` for the delay queue.
    static func mark(_ properties: inout AMQPProperties, due: UnixTime, lane: String) {
        properties.headers[dueHeader] = .int(due.milliseconds)
        properties.headers[laneHeader] = .string(lane)
        // The broker drops an expired message before it is released; the worker's own delay is the point.
        properties.expiration = nil
        properties.persistent = true
    }

    /// Read back from a delivery of the delay queue. A message without the marks (published there
    /// by hand) is due at once and goes to `defaultLane`; a lane that is not one of `lanes` too,
    /// so nothing in the delay queue can make the worker publish elsewhere.
    init(headers: [String: AMQPFieldValue], lanes: Set<String>, defaultLane: String) {
        if case .int(let milliseconds)? = headers[Self.dueHeader] {
            due = UnixTime(milliseconds: milliseconds)
        } else {
            due = UnixTime(milliseconds: 0)
        }
        if case .string(let lane)? = headers[Self.laneHeader], lanes.contains(lane) {
            self.lane = lane
        } else {
            lane = defaultLane
        }
    }

    /// How long to hold it from `now`: zero once due. Never longer than `longest`, so a due time far
    /// in the future (a clock gone wrong) cannot outlast the broker's consumer timeout.
    func wait(now: UnixTime, longest: Duration) -> Duration {
        guard due.milliseconds > now.milliseconds else { return .zero }
        // Checked: a header is anyone's Int64, and the difference of two may not fit one.
        let (remaining, overflow) = due.milliseconds.subtractingReportingOverflow(now.milliseconds)
        return overflow ? longest : min(.milliseconds(remaining), longest)
    }

    /// The properties the job goes back to its lane with.
    static func released(_ properties: AMQPProperties) -> AMQPProperties {
        var released = properties
        for header in bookkeepingHeaders { released.headers[header] = nil }
        released.persistent = true
        return released
    }

    enum ReleaseStep: Equatable {
        /// Publish the copy to its lane now (again, after a failed try).
        case publish
        /// The worker is stopping: leave it unacked; the broker hands it to another worker, which
        /// waits for the same due time.
        case leave
        /// The connection that delivered it is gone, so the broker has already requeued it:
        /// a copy now would be a second one.
        case forget
    }

    /// What to do with a held message whose time came (or whose copy was not confirmed).
    static func releaseStep(stopping: Bool, deliveredOn generation: UInt64, connected: UInt64?) -> ReleaseStep {
        if stopping { return .leave }
        return connected == generation ? .publish : .forget
    }
}
