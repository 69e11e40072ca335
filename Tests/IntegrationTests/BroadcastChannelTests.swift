import APNs
import BroadcastChannels
import Foundation
import Logging
import Redis
import Sandbox
import Testing
import WorkerConfigurationFile

/// Live Activity channels end to end: the real `pushworker channels` executable and the APNs
/// client against the sandbox's channel-management listener, with the registry in the real Redis.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BroadcastChannelTests {
    /// Runs `pushworker ARGUMENTS`; returns its exit status and standard output and error.
    static func pushworker(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushworker")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHWORKER_") }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read before waiting: a full pipe would otherwise hold the child.
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    static func configuration(_ fixture: PipelineFixture, managementPort: Int, directory: String) throws -> String {
        let material = fixture.sandbox.material
        let path = directory + "/pushworker.yaml"
        try """
            redis:
              url: \(PipelineFixture.redisURL)
            apps:
              - name: scores
                platform: apns
                url: https://127.0.0.1:\(fixture.port)
                broadcast_management_url: https://127.0.0.1:\(managementPort)
                ca_file: \(material.caCertificateFile)
                topic: com.example.app
                token:
                  key_file: \(material.tokenKeyFile)
                  key_id: \(material.tokenKeyID)
                  team_id: \(material.teamID)
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func createListShowPruneAndDeleteFromTheCommandLine() async throws {
        try await PipelineFixture.with { fixture in
            let managementPort = try await fixture.sandbox.startChannelManagement()
            let directory = NSTemporaryDirectory() + "pushworker-channels-\(fixture.name)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let config = try Self.configuration(fixture, managementPort: managementPort, directory: directory)
            let redis = RedisClient(configuration: try RedisConfiguration(url: PipelineFixture.redisURL), logger: fixture.logger)
            _ = try await redis.command(["DEL", ChannelRegistry.defaultPrefix + "scores"])

            let game = try await Self.pushworker(["channels", "create", "scores", "--config", config, "--storage-policy", "1",
                                                  "--label", "Final: A vs B", "--ends-at", "2001-01-01T00:00:00Z"])
            #expect(game.status == 0, "\(game.errors)")
            let gameID = game.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(APNsChannelManager.isChannelID(gameID))
            let order = try await Self.pushworker(["channels", "create", "scores", "--config", config])
            let orderID = order.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let atSandbox = fixture.sandbox.channels(bundleID: "com.example.app")
            #expect(atSandbox == [gameID: 1, orderID: 0], "the sandbox holds both channels with their policies")

            let listed = try await Self.pushworker(["channels", "list", "scores", "--config", config])
            #expect(listed.status == 0, "\(listed.errors)")
            #expect(listed.output.contains("\(gameID)  storage_policy=1") && listed.output.contains(#"label="Final: A vs B""#))
            #expect(listed.output.contains("2 of 10000 channels"))

            let shown = try await Self.pushworker(["channels", "show", "scores", orderID, "--config", config])
            #expect(shown.status == 0 && shown.output.hasPrefix("\(orderID)  storage_policy=0"), "\(shown.errors)")

            // The game ended in 2001: prune deletes it at APNs and in Redis, and leaves the other.
            let pruned = try await Self.pushworker(["channels", "prune", "scores", "--ended", "--config", config])
            #expect(pruned.status == 0 && pruned.output.contains("deleted \(gameID) (Final: A vs B)"), "\(pruned.errors)")
            #expect(fixture.sandbox.channels(bundleID: "com.example.app") == [orderID: 0])
            let registry = ChannelRegistry(redis: redis)
            #expect(try await registry.record(gameID, app: "scores") == nil)

            let deleted = try await Self.pushworker(["channels", "delete", "scores", orderID, "--yes", "--config", config])
            #expect(deleted.status == 0 && deleted.output.contains("deleted \(orderID)"), "\(deleted.errors)")
            #expect(fixture.sandbox.channels(bundleID: "com.example.app").isEmpty)
            let afterwards = try await Self.pushworker(["channels", "show", "scores", orderID, "--config", config])
            #expect(afterwards.status != 0 && afterwards.errors.contains("ChannelNotRegistered"), "\(afterwards.output)")

            // Bad input is named before anything is sent.
            let badPolicy = try await Self.pushworker(["channels", "create", "scores", "--config", config, "--storage-policy", "2"])
            #expect(badPolicy.status != 0 && badPolicy.errors.contains("--storage-policy must be 0 or 1"))
            let notAPNs = try await Self.pushworker(["channels", "list", "nosuch", "--config", config])
            #expect(notAPNs.status != 0 && notAPNs.errors.contains("no APNs app of that name"))
            _ = try await redis.command(["DEL", ChannelRegistry.defaultPrefix + "scores"])
        }
    }

    @Test func theClientReadsAndDeletesAndNamesAPNsReasons() async throws {
        try await PipelineFixture.with { fixture in
            let managementPort = try await fixture.sandbox.startChannelManagement()
            var apns = try #require(try fixture.workerConfiguration()[apns: "default"])
            apns.broadcastManagementURL = "https://127.0.0.1:\(managementPort)"
            let manager = try APNsChannelManager(configuration: apns, logger: fixture.logger)
            let id = try await manager.create(storagePolicy: .mostRecentMessage)
            let policy = try await manager.read(id)
            #expect(policy == .mostRecentMessage)
            let listed = try await manager.list()
            #expect(listed == [id])
            try await manager.delete(id)
            do throws(APNsChannelError) {
                _ = try await manager.read(id)
                Issue.record("a deleted channel was read")
            } catch {
                #expect(error.reason == "ChannelNotRegistered" && error.status == 404)
                #expect(error.description.contains("no such channel"))
            }
            await manager.shutdown()
        }
    }
}
