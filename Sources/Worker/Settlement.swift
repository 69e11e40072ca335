import PushCore
import PushTransport

/// The tally of one job's outcomes: counts, events to publish, devices to retry or hold.
struct Settlement: Sendable {
    let job: PushJob
    var counts = JobCounts()
    var events: [PushEvent] = []
    var retryTokens: [DeviceToken] = []
    /// The longest `Retry-After` among the devices to retry: their retry waits at least this long.
    var retryAfter: Duration?
    var heldTokens: [DeviceToken] = []
    /// Devices whose service is down after having delivered (`serviceDown`): they wait in a delay
    /// queue with their attempts untouched, the job's `outageWaits` one more.
    var outageTokens: [DeviceToken] = []
    var credentialsReason: String?
    /// Set when the platform could not be reached for some devices (they are held, attempts untouched).
    var unavailableReason: String?
    /// Groups the job named that do not exist in Redis (or are empty).
    var missingGroups: [String] = []
    /// The platform's message ids are the worker's request ids (APNs' apns-id): events name them
    /// `apns_id` too, and job.completed names the range.
    var requestIDsAreCarried = true
    /// The app's metrics, once its devices were tallied (nil for a job that sent nothing).
    var appMetrics: AppMetrics?

    /// A broadcast job's channel: its answer is a broadcast event, never a token's.
    let channel: String?

    init(job: PushJob, now: UnixTime) {
        self.job = job
        channel = job.options.channel
        counts.chunk = job.chunk
        counts.attempt = job.attempts + 1
    }

    /// Every device's answer, in order (the one tally of both job paths).
    mutating func record(_ devices: [DeviceToken], _ results: [PushResult], retry: RetryPolicy) {
        for (device, result) in zip(devices, results) { record(device, result, retry: retry) }
    }

    mutating func record(_ device: DeviceToken, _ result: PushResult, retry: RetryPolicy) {
        switch result.outcome {
        case .sent:
            counts.sent += 1
            if let kept = result.grantedTTL { counts.shortenedTTL(kept) }
            if let channel { events.append(.broadcastSent(channel: channel, requestID: result.requestID)) }
        case let .tokenInvalid(reason) where channel != nil:
            // A channel is no device token: whatever the answer said, nothing is pruned.
            fail(device, status: result.status, reason: reason, requestID: result.requestID)
        case let .tokenInvalid(reason):
            counts.invalid += 1
            events.append(.tokenInvalid(token: device.given, reason: reason, status: result.status, timestamp: result.timestamp,
                                        requestID: result.requestID, isAPNsID: requestIDsAreCarried))
        case let .permanentFailure(reason):
            fail(device, status: result.status, reason: reason, requestID: result.requestID)
        case let .unavailable(reason):
            // Not the device's fault: it waits for the platform, without using up an attempt.
            heldTokens.append(device)
            unavailableReason = reason
        case .serviceDown where job.outageWaits < PushJob.maximumOutageWaits && retry.delayQueue(forOutageWait: 1) != nil:
            counts.retried += 1
            outageTokens.append(device)
        case let .retryable(reason), let .serviceDown(reason):
            if retry.delayQueue(afterAttempts: job.attempts + 1) != nil {
                counts.retried += 1
                retryTokens.append(device)
                if let wait = result.retryAfter { retryAfter = max(retryAfter ?? wait, wait) }
            } else {
                fail(device, status: result.status, reason: reason, requestID: result.requestID)
            }
        case let .refreshCredentials(reason), let .credentialsProblem(reason):
            heldTokens.append(device)
            credentialsReason = reason
        }
    }

    mutating func fail(_ device: DeviceToken, status: Int, reason: String, requestID: String? = nil) {
        counts.failed += 1
        if let channel {
            events.append(.broadcastFailed(channel: channel, status: status, reason: reason, attempts: job.attempts + 1, requestID: requestID))
            return
        }
        events.append(.deliveryFailed(token: device.given, status: status, reason: reason, attempts: job.attempts + 1,
                                      requestID: requestID, isAPNsID: requestIDsAreCarried))
    }

    /// The ids the attempt's requests carried, for job.completed.
    mutating func sent(with ids: RequestIDRange) {
        counts.firstRequestID = ids.first
        counts.lastRequestID = ids.last   // one device (most jobs): the same string, formatted once by the range
    }
}
