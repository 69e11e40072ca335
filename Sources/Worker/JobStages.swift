import PushCore

/// The way from a `JobPlan` to settling, as a value: the processor asks it for a step, performs
/// the step, and feeds back what came of it. Every decision between the plan and the tally is
/// here, so the task-free path (`JobProcessor.start`) and the task path (`carryOut`) cannot
/// disagree, and tests drive it without a broker.
struct JobStages: Sendable {
    /// What the processor does next.
    enum Step: Sendable, Equatable {
        /// Invalid: a dead-letter copy and job.rejected. The delivery is done with.
        case reject(JobRejection)
        /// A channel operation, answered with a channel event. The delivery is done with.
        case manageChannel(ChannelOperation)
        /// An app this worker does not serve: held in the delay queues while the grace lasts,
        /// then rejected. The delivery is done with.
        case holdOrReject(app: String, rejection: JobRejection)
        /// Marked bulk but delivered from the job queue: republished to the bulk lane.
        case moveToBulkLane(PushJob)
        /// Its app is held by the gate (and the job still valid): into the delay queues.
        case holdBack(PushJob)
        /// A broadcast reads its channel's record first; feed back `prepared(_:)`.
        case prepareBroadcast(PushJob, channel: String)
        /// Groups or a large job: expand and split; feed back `fannedOut(_:)`.
        case fanOut(PushJob)
        /// Look up the job's app and send the devices; feed back `sent(_:)`, or `noApp()`.
        case send(PushJob, [DeviceToken])
        /// Each device gets delivery.failed with `reason`, unsent; feed back `failed()`.
        case fail(PushJob, [DeviceToken], reason: String)
        /// A broadcast went out: note it on the channel's record; feed back `noted()`.
        case noteBroadcast(PushJob, channel: String)
        /// Settle the job's tally. `timed`: the round's tally already took the duration.
        case settle(PushJob, timed: Bool)
        /// Already settled or left to the broker by the step before (deferred, fanned out into
        /// chunk jobs, shutting down): nothing more.
        case stop
    }

    private let inBulkLane: Bool
    private let now: UnixTime
    /// Set by `first` when the plan is a job; as it is sent once a broadcast is prepared. The
    /// feeds after `first` come only after a step that carried a job: without one they stop.
    private var job: PushJob?
    private var devices: [DeviceToken] = []
    private var expands = false

    init(inBulkLane: Bool, now: UnixTime) {
        self.inBulkLane = inBulkLane
        self.now = now
    }

    /// The first step for `plan`. `isHeld` is the gate's answer for an app, asked only for a
    /// valid job in its lane. A first step `.send` is what the task-free path carries out alone:
    /// a job that names its devices, valid, in its lane, its app not held, and no broadcast (that
    /// reads its channel's record in Redis first).
    mutating func first(_ plan: JobPlan, isHeld: (String) -> Bool) -> Step {
        let job: PushJob
        switch plan {
        case .reject(let rejection):
            return .reject(rejection)
        case .manageChannel(let operation):
            return .manageChannel(operation)
        case .unknownApp(let app, let rejection):
            return .holdOrReject(app: app, rejection: rejection)
        case .send(let named), .expire(let named):
            job = named
            devices = named.tokens
        case .expand(let named):
            job = named
            expands = true
        }
        self.job = job
        if job.bulk, !inBulkLane { return .moveToBulkLane(job) }
        // An expired job is reported at once rather than waiting for the hold to lift.
        let expired = JobPlan.isExpired(job, now: now)
        if !expired, isHeld(job.app) { return .holdBack(job) }
        if !expired, let channel = job.options.channel { return .prepareBroadcast(job, channel: channel) }
        return afterBroadcast(job)
    }

    /// The broadcast as it is sent, or nil when it was deferred (Redis could not be read).
    mutating func prepared(_ prepared: PushJob?) -> Step {
        guard let prepared else { return .stop }
        job = prepared
        return afterBroadcast(prepared)
    }

    /// The devices to send here, or nil when the fan-out settled the delivery or left it.
    mutating func fannedOut(_ inline: [DeviceToken]?) -> Step {
        guard let inline, let job else { return .stop }
        devices = inline
        return afterFanOut(job)
    }

    /// No app of the job's platform in any of the roster's generations: its devices fail.
    func noApp() -> Step {
        guard let job else { return .stop }
        return .fail(job, devices, reason: "AppChangedPlatform")
    }

    func failed() -> Step {
        guard let job else { return .stop }
        return .settle(job, timed: false)
    }

    /// The round is tallied; `sentCount` devices were accepted.
    func sent(_ sentCount: Int) -> Step {
        guard let job else { return .stop }
        if let channel = job.options.channel, sentCount > 0 { return .noteBroadcast(job, channel: channel) }
        return .settle(job, timed: true)
    }

    func noted() -> Step {
        guard let job else { return .stop }
        return .settle(job, timed: true)
    }

    private func afterBroadcast(_ job: PushJob) -> Step {
        expands ? .fanOut(job) : afterFanOut(job)
    }

    private func afterFanOut(_ job: PushJob) -> Step {
        // A group job's members are known only now: an expired one's fail here, unsent.
        if JobPlan.isExpired(job, now: now) { return .fail(job, devices, reason: "Expired") }
        return devices.isEmpty ? .settle(job, timed: false) : .send(job, devices)
    }
}
