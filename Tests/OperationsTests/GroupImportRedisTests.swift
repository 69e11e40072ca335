import Foundation
import Operations
import PushCore
import Redis
import Testing

/// `groups import` and the pipelined SADD under it, against the real Redis.
@Suite struct GroupImportRedisTests {
    private static func token(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    private func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "ops-import-\(UUID().uuidString).txt"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func withGroup<Result>(_ body: (RedisClient, String) async throws -> Result) async throws -> Result {
        let redis = try Services.redis()
        let key = "group:" + Services.uniqueName("app") + ":import"
        do {
            let result = try await body(redis, key)
            _ = try? await redis.command(["DEL", key])
            return result
        } catch {
            _ = try? await redis.command(["DEL", key])
            throw error
        }
    }

    @Test func addsTheGoodTokensAndReportsBadLinesByNumber() async throws {
        try await withGroup { redis, key in
            let lines = [
                Self.token(1), "", "  \(Self.token(2))\r", "not-a-token", Self.token(3), Self.token(1),
                String(repeating: "ab", count: 31), Self.token(4).uppercased(), "\t", Self.token(5),
            ]
            // No newline after the last line: it counts too.
            let path = try file(lines.joined(separator: "\n"))
            defer { try? FileManager.default.removeItem(atPath: path) }
            var reader = try LineReader(path: path)
            var importer = GroupImport(redis: redis, key: key, rules: DevicePlatform.apns.rules)
            importer.batchSize = 2
            importer.pipelineDepth = 2
            var bad: [BadLine] = []
            var progress: [ImportProgress] = []
            let summary = try await importer.run(&reader, onBadLine: { bad.append($0) }, onProgress: { progress.append($0) })
            #expect(bad.map(\.number) == [4, 7])
            let eachNotADeviceToken = bad.allSatisfy { $0.problem.contains("not a device token") }
            #expect(eachNotADeviceToken)
            #expect(summary.lines == 10)
            #expect(summary.blank == 2)
            #expect(summary.bad == 2)
            #expect(summary.devices == 6)
            #expect(summary.added == 5)
            #expect(try await redis.setCardinality(key: key) == 5)
            // Stored as given (as `groups add` stores them): an uppercase token stays uppercase.
            #expect(try await redis.command(["SISMEMBER", key, Self.token(4).uppercased()]) == .integer(1))
            #expect(try await redis.command(["SISMEMBER", key, Self.token(2)]) == .integer(1))
            #expect(progress.last?.summary == summary)
            #expect(progress.last?.bytesRead == progress.last?.totalBytes)
        }
    }

    /// Many batches and rounds: every line read once, the set holds exactly the distinct tokens.
    @Test func countsMatchOverManyRounds() async throws {
        try await withGroup { redis, key in
            let count = 25_000
            let path = try file((0..<count).map { Self.token($0 % 20_000) }.joined(separator: "\n") + "\n")
            defer { try? FileManager.default.removeItem(atPath: path) }
            var reader = try LineReader(path: path)
            var importer = GroupImport(redis: redis, key: key, rules: DevicePlatform.apns.rules)
            importer.batchSize = 700
            importer.pipelineDepth = 3
            let summary = try await importer.run(&reader, onBadLine: { Issue.record("bad line \($0.number): \($0.problem)") })
            #expect(summary.lines == count)
            #expect(summary.devices == count)
            #expect(summary.added == 20_000)
            #expect(try await redis.setCardinality(key: key) == 20_000)
            // Importing again adds nothing: SADD is idempotent.
            var again = try LineReader(path: path)
            let addedAgain = try await importer.run(&again, onBadLine: { _ in }).added
            #expect(addedAgain == 0)
        }
    }

    @Test func webPushAndFCMLinesUseTheirPlatformsRules() async throws {
        try await withGroup { redis, key in
            let subscription = "https://push.example.net/wp/abc#p256dh=BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4&auth=BTBZMqHH6r4Tts7J_aSIgg"
            let path = try file("\(subscription)\n\(Self.token(1))\n")
            defer { try? FileManager.default.removeItem(atPath: path) }
            var reader = try LineReader(path: path)
            var bad: [Int] = []
            let summary = try await GroupImport(redis: redis, key: key, rules: DevicePlatform.webpush.rules)
                .run(&reader, onBadLine: { bad.append($0.number) })
            #expect(summary.added == 1)
            #expect(bad == [2])
        }
    }

    /// The replies come back in the order of the commands, error replies in their place.
    @Test func aPipelineAnswersInOrder() async throws {
        try await withGroup { redis, key in
            let replies = try await redis.pipeline([["SADD", key, "a", "b"], ["SADD", key, "b", "c"], ["GET", key], ["SCARD", key]])
            #expect(replies.count == 4)
            #expect(replies[0] == .integer(2))
            #expect(replies[1] == .integer(1))
            guard case .error(let text) = replies[2] else { throw TestFailure("GET of a set answered \(replies[2])") }
            #expect(text.hasPrefix("WRONGTYPE"))
            #expect(replies[3] == .integer(3))
            #expect(try await redis.setAdd(key: key, batches: [["c", "d"], ["e"]]) == 2)
            _ = try await redis.command(["SET", key + ":string", "x"])
            let error = await #expect(throws: RedisError.self) { try await redis.setAdd(key: key + ":string", batches: [["x"]]) }
            #expect(error?.message.contains("WRONGTYPE") == true)
            _ = try await redis.command(["DEL", key + ":string"])
        }
    }

    @Test func anUnreadableFileIsNamed() {
        let error = #expect(throws: OperationError.self) { _ = try LineReader(path: "/nonexistent/tokens.txt") }
        #expect(error?.description.contains("/nonexistent/tokens.txt") == true)
    }
}
