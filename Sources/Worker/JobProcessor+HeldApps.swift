import AMQP
import PushCore

extension JobProcessor {
    /// The longest a held app's job waits between two looks: after a hold lifts, its jobs are back
    /// within this. It also bounds what a hold costs the broker: each held job is republished once
    /// per delay, along `--retry-delays` up to this one.
    static let longestHoldDelay: Duration = .seconds(30)

    /// A job of an app held back (`ConsumptionGate.isHeld`): into the delay queues, so the other
    /// apps' jobs on the queue keep flowing; it comes back and is tried once the hold lifts.
    func holdBack(_ delivery: AMQPDelivery, job: PushJob) async {
        await defer_(delivery, app: job.app, logger: JobLog(logger, job: job).logger, longestDelay: Self.longestHoldDelay)
    }
}
