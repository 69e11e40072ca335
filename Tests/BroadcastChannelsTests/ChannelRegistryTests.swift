import BroadcastChannels
import Foundation
import Logging
import PushCore
import Redis
import Testing

/// The registry against the real Redis (REDIS_URL): a missing Redis fails, never skips.
@Suite struct ChannelRegistryTests {
    static var redisURL: String { ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379/0" }

    static func registry() throws -> (ChannelRegistry, RedisClient, String) {
        let redis = RedisClient(configuration: try RedisConfiguration(url: redisURL), logger: Logger(label: "channels-tests"))
        let prefix = "test:channels:\(UUID().uuidString):"
        return (ChannelRegistry(redis: redis, prefix: prefix), redis, prefix)
    }

    @Test func aRecordReadsBackAsWritten() async throws {
        let (registry, _, _) = try Self.registry()
        let record = ChannelRecord(id: "dHN0LXNyY2gtY2hubA==", storagePolicy: 1, createdAt: 1_800_000_000_000, label: "Final \"A\" vs B ⚽",
                                   endsAt: 1_800_000_600_000)
        try await registry.save(record, app: "scores")
        let read = try await registry.record(record.id, app: "scores")
        #expect(read == record)
        try await registry.noteBroadcast(record.id, app: "scores", at: 1_800_000_100_000)
        let noted = try await registry.record(record.id, app: "scores")
        #expect(noted?.lastBroadcastAt == 1_800_000_100_000 && noted?.label == record.label)
        #expect(try await registry.remove(record.id, app: "scores"))
        let gone = try await registry.record(record.id, app: "scores")
        #expect(gone == nil)
    }

    @Test func everyRecordIsListedAcrossScanPagesAndGarbageIsNamed() async throws {
        let (registry, redis, prefix) = try Self.registry()
        for index in 0..<2_500 {
            try await registry.save(ChannelRecord(id: "Y2hhbm5lbA\(String(format: "%04d", index))==", storagePolicy: index % 2,
                                                  createdAt: Int64(index)), app: "big")
        }
        // Someone else wrote here: not a record.
        _ = try await redis.command(["HSET", prefix + "big", "Zm9v", "not json"])
        _ = try await redis.command(["HSET", prefix + "big", "YmFy", #"{"storage_policy":7,"created":1}"#])
        let (records, unreadable) = try await registry.all(app: "big")
        #expect(records.count == 2_500)
        #expect(Set(records.map(\.id)).count == 2_500)
        #expect(unreadable == ["YmFy", "Zm9v"])
        _ = try await redis.command(["DEL", prefix + "big"])
    }

    @Test func theCapWarningStartsAtNinetyPercent() {
        #expect(ChannelRegistry.capWarning(count: 8_999, limit: 10_000) == nil)
        let warning = ChannelRegistry.capWarning(count: 9_000, limit: 10_000)
        #expect(warning?.contains("9000 of Apple's 10000") == true)
    }

    @Test func aLabelIsCutOnACharacterBoundary() {
        let long = String(repeating: "é", count: 150)
        let cut = ChannelRecord.bounded(long)
        #expect(cut.utf8.count <= ChannelRecord.maxLabelBytes && cut.utf8.count == 200 && cut.allSatisfy { $0 == "é" })
    }

    @Test func endedMeansTheEndHasPassed() {
        let record = ChannelRecord(id: "YQ==", storagePolicy: 0, createdAt: 0, endsAt: 1_000)
        #expect(record.hasEnded(now: 1_000) && !record.hasEnded(now: 999))
        #expect(!ChannelRecord(id: "YQ==", storagePolicy: 0, createdAt: 0).hasEnded(now: .max))
    }
}
