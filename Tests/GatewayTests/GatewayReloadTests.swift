import AMQP
import Foundation
import Glibc
import NIOConcurrencyHelpers
import Testing

/// SIGHUP makes a running `pushworker gateway --config FILE` read its file again: through the
/// real executable, its signal and a file changed on disk, against the real broker.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct GatewayReloadTests {
    static let keys = ["GW_TEST_STEADY_KEY": secret("steady"), "GW_TEST_RETIRING_KEY": secret("retiring"), "GW_TEST_NEWCOMER_KEY": secret("newcomer")]
    static func secret(_ name: String) -> String { name + "-" + String(repeating: "k", count: 32) }

    static func configuration(queue: String, apps: [String], relayProduction: String, gateway: String) -> String {
        let entries = apps.map {
            "  - {name: \($0), platform: apns, topic: com.example.\($0), token: {key_file: /nonexistent/AuthKey.p8, key_id: ABCDE12345, team_id: TEAM123456}}"
        }
        return """
            amqp: {url: '\(GatewayFixture.amqpURL)'}
            redis: {url: '\(GatewayFixture.redisURL)'}
            worker: {job_queue: \(queue)}
            apps:
            \(entries.joined(separator: "\n"))
            gateway:
              relay_apps: {development: default, production: \(relayProduction)}
            \(gateway)
            """
    }

    /// New apps, keys, relay apps and limits take effect; removed ones are refused; a bad file is
    /// refused naming its field while the running configuration stays; the jobs posted all along
    /// are each answered 202 and queued (before, SIGHUP ended the gateway).
    @Test func sighupReloadsTheFileAndABadFileLeavesTheRunningOne() async throws {
        let queue = "gateway-test.\(UUID().uuidString.prefix(8)).jobs"
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gateway-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("pushworker.yaml")
        let before = Self.configuration(queue: queue, apps: ["default", "old-app"], relayProduction: "default", gateway: """
              api_keys:
                - {name: steady, key: {env: GW_TEST_STEADY_KEY}, apps: "*", requests_per_second: 1000000}
                - {name: retiring, key: {env: GW_TEST_RETIRING_KEY}, apps: "*"}
            """)
        let after = Self.configuration(queue: queue, apps: ["default", "news"], relayProduction: "news", gateway: """
              relay_limits: {per_address: {requests_per_second: 7, burst: 70}}
              api_keys:
                - {name: steady, key: {env: GW_TEST_STEADY_KEY}, apps: "*", requests_per_second: 1000000}
                - {name: newcomer, key: {env: GW_TEST_NEWCOMER_KEY}, apps: [news]}
            """)
        let broken = after.replacingOccurrences(of: "apps: [news]}", with: "apps: [news], requests_per_second: 0}")
        try before.write(to: config, atomically: true, encoding: .utf8)
        let broker = try await GatewayFixture.connectedBroker()
        try await GatewayProcess.with(config: config, environment: Self.keys) { gateway in
            let steady = Self.keys["GW_TEST_STEADY_KEY"]!, retiring = Self.keys["GW_TEST_RETIRING_KEY"]!
            let newcomer = Self.keys["GW_TEST_NEWCOMER_KEY"]!
            #expect(try await gateway.postJob(app: "old-app", key: retiring).status == 202)
            #expect(try await gateway.postJob(app: "news", key: steady).status == 400)
            #expect(try await gateway.postJob(app: "news", key: newcomer).status == 401)

            // Jobs posted all through the reloads, with a key both files have.
            let stop = NIOLockedValueBox(false)
            let port = gateway.port
            let background = Task {
                var statuses = [Int]()
                while !stop.withLockedValue({ $0 }) {
                    let job = #"{"tokens":["\#(RelayPost.token)"],"payload":{"aps":{"alert":"during"}}}"#
                    statuses.append(try await LoopbackHTTP.send(port: port, .POST, "/v1/jobs", headers: [("Authorization", "Bearer \(steady)")],
                                                                body: Array(job.utf8)).status)
                }
                return statuses
            }

            try after.write(to: config, atomically: true, encoding: .utf8)
            gateway.signal(SIGHUP)
            let reloaded = try await gateway.waitForLog("gateway configuration reloaded")
            #expect(reloaded.contains("per address 7/s burst 70") && reloaded.contains("/relay-to/ → default, news"), "\(reloaded)")
            #expect(try await gateway.postJob(app: "news", key: newcomer).status == 202)
            #expect(try await gateway.postJob(app: "default", key: newcomer).status == 403)
            #expect(try await gateway.postJob(app: "news", key: retiring).status == 401)
            let removed = try await gateway.postJob(app: "old-app", key: steady)
            #expect(removed.status == 400 && removed.body.contains("unknown app \\\"old-app\\\""), "\(removed)")
            let relayed = try await LoopbackHTTP.send(port: port, .POST, "/relay-to/production/\(RelayPost.token)",
                                                      headers: RelayPost.headers, body: RelayPost.body)
            #expect(relayed.status == 201)

            try broken.write(to: config, atomically: true, encoding: .utf8)
            gateway.signal(SIGHUP)
            let refused = try await gateway.waitForLog("gateway configuration reload refused")
            #expect(refused.contains("pushworker.yaml:12: gateway.api_keys[1].requests_per_second: must be 1…1000000, got 0"), "\(refused)")
            #expect(try await gateway.postJob(app: "news", key: newcomer).status == 202)
            #expect(gateway.process.isRunning)

            stop.withLockedValue { $0 = true }
            let during = try await background.value
            let allAcceptedDuring = !during.isEmpty && during.allSatisfy { $0 == 202 }
            #expect(allAcceptedDuring, "\(during.filter { $0 != 202 })")

            // Everything answered 202 or 201 is in the queue, the relayed job for the new app.
            var queued = [String]()
            while let delivery = try await broker.get(queue: queue) { queued.append(String(decoding: delivery.body, as: UTF8.self)) }
            #expect(queued.count == 1 + 1 + during.count + 1 + 1)
            let relayedID = try #require(relayed.body.split(separator: "\"").dropFirst(3).first)
            let relayedJobQueued = queued.contains { $0.contains("\"id\":\"\(relayedID)\"") && $0.contains("\"app\":\"news\"") }
            #expect(relayedJobQueued)
        }
        try? await broker.deleteQueue(queue)
        await broker.shutdown()
    }
}
