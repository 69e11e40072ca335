import PushCore
import Redis

/// An app's broadcast channels in Redis: one hash per app (`<prefix><app>`), the channel id the
/// field, a `ChannelRecord` the value. APNs is the truth of which channels exist; the registry holds
/// what APNs does not (label, end, last broadcast) and what a broadcast needs without asking APNs
/// (the storage policy, which decides `apns-expiration`).
public struct ChannelRegistry: Sendable {
    public static let defaultPrefix = "pushworker:channels:"
    /// Apple allows 10,000 channels per app and environment; `list` and the worker warn from 90%.
    public static let platformLimit = 10_000
    public static let warningShare = 0.9

    private let redis: RedisClient
    private let prefix: String

    public init(redis: RedisClient, prefix: String = ChannelRegistry.defaultPrefix) {
        self.redis = redis
        self.prefix = prefix
    }

    public func key(app: String) -> String { prefix + app }

    public func save(_ record: ChannelRecord, app: String) async throws(RedisError) {
        let reply = try await redis.command(["HSET", key(app: app), record.id, String(decoding: record.stored, as: UTF8.self)])
        if case let .error(text) = reply { throw RedisError(.reply, "HSET \(key(app: app)): \(text)") }
    }

    /// The channel's record; nil when the registry has none (or one it cannot read: `problem` says).
    public func record(_ id: String, app: String) async throws(RedisError) -> ChannelRecord? {
        let reply = try await redis.command(["HGET", key(app: app), id])
        switch reply {
        case .null: return nil
        case let .error(text): throw RedisError(.reply, "HGET \(key(app: app)): \(text)")
        case let .string(bytes): return ChannelRecord(id: id, stored: bytes)
        default: return nil
        }
    }

    /// Every record of the app, by id; values that are not records are left out and counted.
    public func all(app: String) async throws(RedisError) -> (records: [ChannelRecord], unreadable: [String]) {
        var records: [ChannelRecord] = []
        var unreadable: [String] = []
        var cursor = "0"
        repeat {
            let reply = try await redis.command(["HSCAN", key(app: app), cursor, "COUNT", "1000"])
            if case let .error(text) = reply { throw RedisError(.reply, "HSCAN \(key(app: app)): \(text)") }
            guard case let .array(parts) = reply, parts.count == 2, let next = parts[0].text, case let .array(items) = parts[1],
                  items.count % 2 == 0 else {
                throw RedisError(.reply, "HSCAN \(key(app: app)): unexpected answer")
            }
            cursor = next
            for index in stride(from: 0, to: items.count, by: 2) {
                guard let id = items[index].text else { continue }
                guard case let .string(bytes) = items[index + 1], let record = ChannelRecord(id: id, stored: bytes) else {
                    unreadable.append(id)
                    continue
                }
                records.append(record)
            }
        } while cursor != "0"
        // HSCAN may return a field twice across pages.
        var seen = Set<String>()
        records = records.filter { seen.insert($0.id).inserted }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        return (records, Array(Set(unreadable)).sorted())
    }

    /// How many channels the registry holds for the app.
    public func count(app: String) async throws(RedisError) -> Int {
        let reply = try await redis.command(["HLEN", key(app: app)])
        switch reply {
        case let .integer(count): return Int(count)
        case let .error(text): throw RedisError(.reply, "HLEN \(key(app: app)): \(text)")
        default: throw RedisError(.reply, "HLEN \(key(app: app)): unexpected answer")
        }
    }

    @discardableResult
    public func remove(_ id: String, app: String) async throws(RedisError) -> Bool {
        let reply = try await redis.command(["HDEL", key(app: app), id])
        switch reply {
        case let .integer(count): return count > 0
        case let .error(text): throw RedisError(.reply, "HDEL \(key(app: app)): \(text)")
        default: return false
        }
    }

    /// Notes a broadcast sent on the channel, if the registry knows it.
    public func noteBroadcast(_ id: String, app: String, at milliseconds: Int64) async throws(RedisError) {
        guard var record = try await record(id, app: app) else { return }
        record.lastBroadcastAt = milliseconds
        try await save(record, app: app)
    }

    /// The warning for `count` channels, from 90% of Apple's limit on; nil below.
    public static func capWarning(count: Int, limit: Int) -> String? {
        guard Double(count) >= Double(limit) * warningShare else { return nil }
        return "\(count) of Apple's \(limit) channels per app and environment are in use: delete ended ones (pushworker channels prune APP --ended)"
    }
}
