import AMQP
import Logging
import PushCore

/// Routing: what a delivery is (parsed, or why not), and what its size tells the prefetch tuner.
extension JobProcessor {
    /// Feeds the prefetch tuner; a fan-out counts as a full chunk.
    func observe(_ plan: JobPlan, bodyBytes: Int) {
        guard let prefetchTuner else { return }
        // The bulk lane's consumer has its own fixed prefetch.
        if case .send(let job) = plan, job.bulk { return }
        let devices = switch plan {
        case .reject, .unknownApp, .manageChannel: 1
        case .send(let job), .expire(let job): job.tokens.count
        case .expand: configuration.chunkSize
        }
        if let prefetch = prefetchTuner.observe(devices: devices, bodyBytes: bodyBytes) {
            logger.info("prefetch retuned to the jobs' size", metadata: [LogKeys.prefetch: "\(prefetch)"])
            gate.retune(prefetch: prefetch)
        }
    }

    /// What to do with a delivery: parsed, then decided (`JobPlan`).
    func plan(_ delivery: AMQPDelivery, now: UnixTime) -> JobPlan {
        var unknownApp: String?
        let parsed = parse(delivery, now: now, unknownApp: &unknownApp)
        // `channel_op` is no push job's field: the message is a channel operation (rare, so read
        // only once the job parser has said so).
        if case .failure(let rejection) = parsed, rejection.field == ChannelOperation.field {
            return channelOperationPlan(delivery)
        }
        return JobPlan.decide(parsed, unknownApp: unknownApp, chunkSize: configuration.chunkSize, now: now)
    }

    /// The job, or what is wrong with it (size, JSON, fields, app). `unknownApp` is set when the
    /// job names an app this worker does not serve.
    private func parse(_ delivery: AMQPDelivery, now: UnixTime, unknownApp: inout String?) -> Result<PushJob, JobRejection> {
        do throws(JobRejection) {
            let size = delivery.discardedBodySize ?? delivery.body.count
            guard size <= configuration.maxMessageBytes, delivery.discardedBodySize == nil else {
                throw JobRejection(field: nil, "the message is \(size) bytes; the limit is \(configuration.maxMessageBytes) (--max-message-bytes). Split the devices over several jobs or use groups")
            }
            let apps = roster.current.apps
            var unknown: String?
            defer { unknownApp = unknown }
            // The app decides the platform, and so how the rest of the job reads.
            let job = try parser.parse(delivery.body, messageID: delivery.properties.messageID, now: now.seconds,
                                       makeID: JobID.next) { (app: String) throws(JobRejection) in
                guard let served = apps[app] else {
                    unknown = app
                    throw JobRejection(field: "app", "unknown app \"\(app)\" (this worker serves: \(apps.keys.joined(separator: ", ")))")
                }
                return served.rules
            }
            if let warning = job.options.ruleWarning {
                JobLog(logger, job: job).logger.warning("the job breaks its push type's rules: \(warning)")
            }
            return .success(job)
        } catch {
            return .failure(error)
        }
    }
}
