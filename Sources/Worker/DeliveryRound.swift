import CoreMetrics
import PushCore
import PushTransport
import NIOConcurrencyHelpers

/// Sends one notification to many devices at once and reports when every answer is in. Callbacks
/// from the connection pool fill a preallocated result array; the last one calls `completion`
/// (on the HTTP/2 thread), so a 1,000-device chunk costs one hand-off rather than one per device.
enum DeliveryRound {
    /// `ids` names the requests: the device at `i` gets `ids.id(at: positions?[i] ?? i)` (positions:
    /// where a resent device stands in the job's list, so it keeps its id).
    /// The round starts once `budget` has room for its devices and gives them back as their answers
    /// come in (`RoundShare`), the last of it before `completion` runs.
    static func send(_ job: PushJob, to devices: [DeviceToken], ids: RequestIDRange, positions: [Int]? = nil,
                     with transport: any PushTransport, budget: DevicesInFlight, deliveredAt: ContinuousClock.Instant,
                     latency: LatencyRecorder, roundTrip: (any RecorderHandler)? = nil, completion: @escaping @Sendable ([PushResult]) -> Void) {
        budget.acquire(devices.count, bulk: job.bulk) {
            sendNow(job, to: devices, ids: ids, positions: positions, with: transport, budget: budget, deliveredAt: deliveredAt,
                    latency: latency, roundTrip: roundTrip, completion: completion)
        }
    }

    /// Gives the round's share of `budget` back before `completion` runs (the release itself may
    /// start a waiting round).
    private static func sendNow(_ job: PushJob, to devices: [DeviceToken], ids: RequestIDRange, positions: [Int]?,
                                with transport: any PushTransport, budget: DevicesInFlight, deliveredAt: ContinuousClock.Instant,
                                latency: LatencyRecorder, roundTrip: (any RecorderHandler)?, completion: @escaping @Sendable ([PushResult]) -> Void) {
        // One clock read for the whole round: its devices are handed to the transport together.
        let sentAt = ContinuousClock.now
        // Each device's answer runs one closure that does everything (timings included): a wrapper
        // per device for the round-trip timer cost an allocation and a clock read more per device.
        switch devices.count {
        case 0:
            completion([])
        case 1:
            // Most jobs name one device: nothing to collect.
            transport.send(job, to: devices[0], requestID: ids.id(at: positions?[0] ?? 0)) { result in
                latency.recordAnswer(deliveredAt: deliveredAt, sentAt: sentAt, roundTrip: roundTrip)
                budget.release(1, bulk: job.bulk)
                completion([result])
            }
        default:
            let count = devices.count
            let bulk = job.bulk
            let collector = ResultCollector(count: count, share: budget.share(of: count, bulk: bulk), release: { units in
                budget.release(units: units, bulk: bulk)
            }, completion: completion)
            for index in devices.indices {
                transport.send(job, to: devices[index], requestID: ids.id(at: positions?[index] ?? index)) { result in
                    latency.recordAnswer(deliveredAt: deliveredAt, sentAt: sentAt, roundTrip: roundTrip)
                    collector.record(result, at: index)
                }
            }
        }
    }

    static func send(_ job: PushJob, to devices: [DeviceToken], ids: RequestIDRange, positions: [Int]? = nil,
                     with transport: any PushTransport, budget: DevicesInFlight, deliveredAt: ContinuousClock.Instant,
                     latency: LatencyRecorder, roundTrip: (any RecorderHandler)? = nil) async -> [PushResult] {
        await withCheckedContinuation { continuation in
            send(job, to: devices, ids: ids, positions: positions, with: transport, budget: budget, deliveredAt: deliveredAt,
                 latency: latency, roundTrip: roundTrip) {
                continuation.resume(returning: $0)
            }
        }
    }
}

private final class ResultCollector: Sendable {
    private struct State {
        var results: [PushResult?]
        /// The budget held, and (`waiting`) the devices whose answer has not come.
        var share: RoundShare
    }
    private let state: NIOLockedValueBox<State>
    private let release: @Sendable (Int) -> Void
    private let completion: @Sendable ([PushResult]) -> Void

    init(count: Int, share: Int, release: @escaping @Sendable (Int) -> Void, completion: @escaping @Sendable ([PushResult]) -> Void) {
        state = NIOLockedValueBox(State(results: Array(repeating: nil, count: count), share: RoundShare(share: share, devices: count)))
        self.release = release
        self.completion = completion
    }

    func record(_ result: PushResult, at index: Int) {
        let (units, finished): (Int, [PushResult]?) = state.withLockedValue { state in
            guard state.results[index] == nil else { return (0, nil) }
            state.results[index] = result
            let units = state.share.answered()
            guard state.share.waiting == 0 else { return (units, nil) }
            return (units, state.results.map { $0! })
        }
        // Released before `completion`: the release itself may start a waiting round.
        if units > 0 { release(units) }
        if let finished { completion(finished) }
    }
}
