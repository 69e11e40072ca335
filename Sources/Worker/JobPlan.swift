import PushCore

/// What happens to one delivery, decided once from the parsed job: both the task-free path
/// (`JobProcessor.start`) and the task path (`process`) follow it, step by step (`JobStages`).
enum JobPlan: Sendable {
    /// Invalid: a dead-letter copy and job.rejected, never retried.
    case reject(JobRejection)
    /// Names an app this worker does not serve, maybe not yet (a rollout adding it): held while
    /// `UnknownAppGrace` allows, then rejected with `rejection`.
    case unknownApp(String, rejection: JobRejection)
    /// Names few enough devices for one round, still valid: send them now.
    case send(PushJob)
    /// Names groups, or more devices than a chunk: expand and split first (JobProcessor+FanOut).
    case expand(PushJob)
    /// Names its devices, but its expiration has passed: each gets delivery.failed "Expired".
    case expire(PushJob)
    /// Creates or deletes a broadcast channel (`channel_op`), answered with a channel event.
    case manageChannel(ChannelOperation)

    /// - Parameter unknownApp: the job's app, when that is why it was refused.
    static func decide(_ parsed: Result<PushJob, JobRejection>, unknownApp: String? = nil, chunkSize: Int, now: UnixTime) -> JobPlan {
        if case .failure(let rejection) = parsed, let unknownApp { return .unknownApp(unknownApp, rejection: rejection) }
        return switch parsed {
        case .failure(let rejection): .reject(rejection)
        case .success(let job) where !job.groups.isEmpty || job.tokens.count > chunkSize: .expand(job)
        case .success(let job) where isExpired(job, now: now): .expire(job)
        case .success(let job): .send(job)
        }
    }

    /// APNs would discard it anyway: it is reported rather than sent stale.
    static func isExpired(_ job: PushJob, now: UnixTime) -> Bool {
        job.expiration != 0 && job.expiration < now.seconds
    }
}
