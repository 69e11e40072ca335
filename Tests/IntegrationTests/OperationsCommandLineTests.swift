import Foundation
import PushCore
import Testing

/// The operators' commands as a person runs them: the real `pushworker` executable against a
/// real worker's queues and Redis (the logic itself is tested in OperationsTests).
@Suite struct OperationsCommandLineTests {
    /// A job the worker dead-letters is listed, replayed as a fresh job (which the worker reads
    /// and, still invalid, rejects again), and dropped.
    @Test func deadListReplayAndDropOnAWorkersDeadQueue() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"dead-1","tokens":["nope"],"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { events in events.contains { $0.routingKey == "job.rejected" } }
            try await waitUntil("the copy is in the dead queue") { try await fixture.control.messageCount(queue: fixture.deadQueue) == 1 }
            let queue = ["--job-queue", fixture.jobQueue, "--amqp-url", PipelineFixture.amqpURL]

            let listed = try CommandLineTests.run(["dead", "list", "--json"] + queue)
            #expect(listed.status == 0)
            guard case .array(let letters) = try JSONValue.parse(Array(listed.output.utf8)), case .object(let first)? = letters.first else {
                Issue.record("dead list --json printed \(listed.output)")
                return
            }
            #expect(first["id"] == .string("dead-1"))
            #expect(first["field"] == .string("tokens[0]"))
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 1)

            let none = try CommandLineTests.run(["dead", "replay"] + queue)
            #expect(none.status == 64)
            #expect(none.output.contains("give --id ID (repeatable) or --all"))

            let replayed = try CommandLineTests.run(["dead", "replay", "--id", "dead-1"] + queue)
            #expect(replayed.status == 0)
            #expect(replayed.output.contains("moved 1 of 1 selected jobs"))
            // The worker reads the copy as a new job: a second rejection, a second dead copy.
            let events = try await fixture.events { events in events.filter { $0.routingKey == "job.rejected" }.count >= 1 }
            let replayedRejected = events.contains { $0.routingKey == "job.rejected" && $0.string("job_id") == "dead-1" }
            #expect(replayedRejected)
            try await waitUntil("the copy is dead again") { try await fixture.control.messageCount(queue: fixture.deadQueue) == 1 }

            let missing = try CommandLineTests.run(["dead", "drop", "--id", "other"] + queue)
            #expect(missing.status == 1)
            #expect(missing.output.contains("no job with id other"))
            // Without --yes (no terminal here, as in a script): counted, nothing dropped. Before,
            // this emptied the dead queue without a question.
            let unconfirmed = try CommandLineTests.run(["dead", "drop", "--all"] + queue)
            #expect(unconfirmed.status == 1)
            #expect(unconfirmed.output.contains("would drop 1 selected jobs") && unconfirmed.output.contains("add --yes"), "\(unconfirmed.output)")
            let dry = try CommandLineTests.run(["dead", "drop", "--all", "--yes", "--dry-run"] + queue)
            #expect(dry.status == 1 && dry.output.contains("would drop 1"))
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 1)
            let dropped = try CommandLineTests.run(["dead", "drop", "--all", "--yes"] + queue)
            #expect(dropped.status == 0)
            #expect(dropped.output.contains("dropped 1 of 1"))
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)

            let queues = try CommandLineTests.run(["queues", "--json", "--retry-delays", "300ms"] + queue)
            #expect(queues.status == 0)
            #expect(queues.output.contains(#"{"name":"\#(fixture.jobQueue)","role":"jobs","exists":true,"ready":0,"consumers":1"#))
            #expect(queues.output.contains(#""name":"\#(fixture.jobQueue).delay","role":"delay","exists":false"#))
        }
    }

    @Test func groupsImportCountAndDelete() throws {
        let prefix = "pushworker-test.cli.\(UUID().uuidString.prefix(8)):"
        let redis = ["--redis-url", PipelineFixture.redisURL, "--group-key-prefix", prefix]
        let path = NSTemporaryDirectory() + "cli-import-\(UUID().uuidString).txt"
        try Data([PipelineFixture.token(1), "bad", "", PipelineFixture.token(2)].joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let imported = try CommandLineTests.run(["groups", "import", "news", "all", path, "--batch-size", "1"] + redis)
        #expect(imported.status == 2)
        #expect(imported.output.contains("\(path):2: not a device token"))
        #expect(imported.output.contains("4 lines in"))
        #expect(imported.output.contains("2 devices (2 new"))
        #expect(try CommandLineTests.run(["groups", "count", "news", "all"] + redis).output == "2\n")

        let refused = try CommandLineTests.run(["groups", "delete", "news", "all"] + redis)
        #expect(refused.status == 1)
        #expect(refused.output.contains("add --yes"))
        #expect(try CommandLineTests.run(["groups", "delete", "news", "all", "--yes"] + redis).status == 0)
        #expect(try CommandLineTests.run(["groups", "count", "news", "all"] + redis).output == "0\n")
    }
}
