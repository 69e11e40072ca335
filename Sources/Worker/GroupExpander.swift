import Logging
import PushCore
import Redis

/// Turns a job's explicit tokens and groups into unique devices, streamed in batches so a group of
/// millions never sits in memory as one list. Groups are read with SSCAN (never SMEMBERS, which
/// blocks Redis on a huge set), which may repeat members; the DeviceSet drops repeats and overlaps.
struct GroupExpander: Sendable {
    let redis: RedisClient
    let configuration: WorkerConfiguration
    let logger: Logger
    /// Waits between tries of one SSCAN page while Redis is unreachable.
    var retryDelays: [Duration] = [.milliseconds(200), .seconds(1), .seconds(3)]

    struct Malformed: Sendable {
        let group: String
        let member: String
        let problem: String
    }

    /// - Parameters:
    ///   - rules: how the job's platform reads a group member as a device.
    ///   - emit: receives batches of at most `batchSize` new devices, in order.
    ///   - malformed: group members that are not device tokens (reported, never sent).
    /// - Returns: the groups that had no members (no such key, or an empty set).
    func expand(_ job: PushJob, rules: any PlatformJobRules, batchSize: Int,
                malformed: (Malformed) async throws -> Void,
                emit: ([DeviceToken]) async throws -> Void) async throws -> [String] {
        let sizes = try await groupSizes(job)
        var seen = DeviceSet()
        // Capped so that a huge or hostile number cannot reserve memory the scan would never fill.
        seen.reserveCapacity(min(job.tokens.count + sizes.reduce(0, +), Self.maxReservedDevices))
        var batch = [DeviceToken]()
        batch.reserveCapacity(batchSize)
        func add(_ token: DeviceToken) async throws {
            guard seen.insert(token) else { return }
            batch.append(token)
            if batch.count == batchSize {
                try await emit(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        for token in job.tokens { try await add(token) }
        var missing: [String] = []
        for (group, size) in zip(job.groups, sizes) {
            let key = configuration.groupKey(app: job.app, group: group)
            guard size > 0 else {
                missing.append(group)
                continue
            }
            var cursor = "0"
            repeat {
                let page = try await scanPage(key: key, cursor: cursor)
                cursor = page.cursor
                for member in page.members {
                    do {
                        try await add(rules.device(from: .string(member)))
                    } catch let problem as DeviceProblem {
                        try await malformed(Malformed(group: group, member: member, problem: problem.description))
                    }
                }
            } while cursor != "0"
        }
        if !batch.isEmpty { try await emit(batch) }
        return missing
    }

    /// A million devices' keys (sizes in docs/evidence/code-measurements.md#fan-out-key-table):
    /// larger fan-outs grow the set as they go.
    static let maxReservedDevices = 1_000_000

    /// The groups' sizes now (SCARD: 0 for a key that does not exist). They may change while
    /// scanning: a group that is empty here is reported missing, a size is only a capacity hint.
    private func groupSizes(_ job: PushJob) async throws(RedisError) -> [Int] {
        var sizes: [Int] = []
        sizes.reserveCapacity(job.groups.count)
        for group in job.groups {
            sizes.append(try await redis.setCardinality(key: configuration.groupKey(app: job.app, group: group)))
        }
        return sizes
    }

    private func scanPage(key: String, cursor: String) async throws(RedisError) -> (cursor: String, members: [String]) {
        var attempt = 0
        while true {
            do {
                return try await redis.scanSetPage(key: key, cursor: cursor, count: 1000)
            } catch where error.code == .connection && attempt < retryDelays.count {
                logger.warning("Redis unavailable while expanding a group; retrying", metadata: [
                    LogKeys.redisKey: "\(key)", LogKeys.error: "\(error.message)", LogKeys.retryIn: "\(retryDelays[attempt])",
                ])
                try? await Task.sleep(for: retryDelays[attempt])
                attempt += 1
            }
        }
    }
}
