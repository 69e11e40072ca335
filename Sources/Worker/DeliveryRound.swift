import APNs
import PushCore
import Synchronization

/// Sends one notification to many devices at once and waits for every answer. Callbacks from the
/// connection pool fill a preallocated result array; the last one resumes the waiting job, so a
/// 1,000-device chunk costs one suspension rather than a task per device.
enum DeliveryRound {
    static func send(_ job: PushJob, to devices: [DeviceToken], with client: APNsClient,
                     deliveredAt: ContinuousClock.Instant, latency: LatencyRecorder) async -> [APNsResult] {
        guard !devices.isEmpty else { return [] }
        let collector = ResultCollector(count: devices.count)
        return await withCheckedContinuation { continuation in
            collector.setContinuation(continuation)
            for (index, device) in devices.enumerated() {
                let notification = APNsNotification(
                    token: device, topic: job.topic, pushType: job.pushType, priority: job.priority,
                    expiration: job.expiration, collapseID: job.collapseID, payload: job.payload)
                client.send(notification) { result in
                    latency.record(since: deliveredAt)
                    collector.record(result, at: index)
                }
            }
        }
    }
}

private final class ResultCollector: Sendable {
    private struct State {
        var results: [APNsResult?]
        var remaining: Int
        var continuation: CheckedContinuation<[APNsResult], Never>?
    }
    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count))
    }

    func setContinuation(_ continuation: CheckedContinuation<[APNsResult], Never>) {
        state.withLock { $0.continuation = continuation }
    }

    func record(_ result: APNsResult, at index: Int) {
        let finished: (CheckedContinuation<[APNsResult], Never>, [APNsResult])? = state.withLock { state in
            guard state.results[index] == nil else { return nil }
            state.results[index] = result
            state.remaining -= 1
            guard state.remaining == 0, let continuation = state.continuation else { return nil }
            state.continuation = nil
            return (continuation, state.results.map { $0! })
        }
        if let (continuation, results) = finished { continuation.resume(returning: results) }
    }
}
