import AMQP
import PushCore

/// A job for an app this worker does not serve. Adding an app means editing the file on every
/// worker of a fleet and reloading each: until the last one has, a job for the new app may reach a
/// worker that does not know it yet. Such a job waits in the delay queues (as retries do, confirmed
/// before the ack: never lost, never doubled) for `grace` after a worker first saw it, then is
/// rejected as it always was. When it was first seen travels with the message, in a header, so the
/// grace holds across workers and restarts.
struct UnknownAppGrace: Equatable, Sendable {
    /// Milliseconds since the Unix epoch, by the clock of the worker that first met the job.
    static let firstSeenHeader = "x-pushworker-unknown-app-since"

    /// 0: rejected at once, as before there was a grace.
    let grace: Duration

    enum Verdict: Equatable {
        /// Into the delay queues, waiting at most `longestDelay` before the next look, with
        /// `firstSeen` in its header. `begins`: the first look at it, the one to log.
        case hold(firstSeen: UnixTime, longestDelay: Duration, begins: Bool)
        /// The grace is over (or there is none): dead-lettered with job.rejected.
        case reject
    }

    /// - Parameters:
    ///   - header: the message's `firstSeenHeader`, if any.
    ///   - longestDelay: the longest wait between two looks (`JobProcessor.longestHoldDelay`).
    func verdict(firstSeen header: AMQPFieldValue?, now: UnixTime, longestDelay: Duration) -> Verdict {
        guard grace > .zero else { return .reject }
        let graceMilliseconds = DurationText.milliseconds(grace)
        guard case .int(let stamped)? = header else {
            return .hold(firstSeen: now, longestDelay: min(longestDelay, grace), begins: true)
        }
        // A time ahead of this clock (another worker's clock runs ahead, or a forged header) counts
        // as now: the grace can only be shortened by skew, never stretched.
        let firstSeen = min(stamped, now.milliseconds)
        let (elapsed, overflow) = now.milliseconds.subtractingReportingOverflow(firstSeen)
        guard !overflow, elapsed < graceMilliseconds else { return .reject }
        let remaining = Duration.milliseconds(graceMilliseconds - elapsed)
        return .hold(firstSeen: UnixTime(milliseconds: firstSeen), longestDelay: min(longestDelay, remaining), begins: false)
    }
}
