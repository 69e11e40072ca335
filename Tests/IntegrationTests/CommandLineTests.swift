import Foundation
import Testing

/// Start-up checks of the real `pushworker` executable (built next to this test bundle): a worker
/// that cannot be right refuses to start, naming the option and the problem.
@Suite struct CommandLineTests {
    struct Outcome {
        let status: Int32
        let output: String
    }

    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushworker")
    }

    /// Runs `pushworker` with `arguments` and a clean PUSHWORKER_* environment (plus `environment`); killed after 60 s
    /// (a bound on the test: a refused start takes milliseconds).
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
        #expect(FileManager.default.isExecutableFile(atPath: executable.path), "build the package first: \(executable.path)")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHWORKER_") }
            .merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: killer)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        killer.cancel()
        return Outcome(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    static func tokenKey() throws -> String {
        let path = NSTemporaryDirectory() + "cli-test-\(UUID().uuidString).p8"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        #expect(openssl.terminationStatus == 0)
        return path
    }

    @Test func tokenAuthWithoutATopicDoesNotStart() throws {
        let key = try Self.tokenKey()
        defer { try? FileManager.default.removeItem(atPath: key) }
        let outcome = try Self.run(["run", "--apns-key-file", key, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
                                    "--amqp-url", "amqp://guest:guest@127.0.0.1:1/"])
        #expect(outcome.status != 0)
        #expect(outcome.output.contains("--apns-topic is required with token auth"))
    }

    /// A chunk job of 20,000 of the longest tokens would exceed the default 4 MiB limit: the worker
    /// would dead-letter the chunks it publishes itself.
    @Test func aChunkSizeWhoseChunksExceedTheMessageLimitDoesNotStart() throws {
        let key = try Self.tokenKey()
        defer { try? FileManager.default.removeItem(atPath: key) }
        let outcome = try Self.run(["run", "--apns-key-file", key, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
                                    "--apns-topic", "com.example.app", "--chunk-size", "20000", "--amqp-url", "amqp://guest:guest@127.0.0.1:1/"])
        #expect(outcome.status != 0)
        #expect(outcome.output.contains("--chunk-size 20000 makes chunk jobs of up to"))
        #expect(outcome.output.contains("Lower --chunk-size to 10389"))
    }

    @Test func aProxyURLOfAnotherSchemeDoesNotStart() throws {
        let key = try Self.tokenKey()
        defer { try? FileManager.default.removeItem(atPath: key) }
        let outcome = try Self.run(["run", "--apns-key-file", key, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
                                    "--apns-topic", "com.example.app", "--apns-proxy", "socks5://user:proxysecret@127.0.0.1:1080",
                                    "--amqp-url", "amqp://guest:guest@127.0.0.1:1/"])
        #expect(outcome.status != 0)
        #expect(outcome.output.contains("--apns-proxy: the scheme must be http://"))
        #expect(!outcome.output.contains("proxysecret"))
    }

    @Test func anEncryptedTokenKeyDoesNotStartAndIsNotPromptedFor() throws {
        let path = NSTemporaryDirectory() + "cli-test-\(UUID().uuidString).p8"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes256", "-pass", "pass:secret", "-out", path]
        try openssl.run()
        openssl.waitUntilExit()
        let outcome = try Self.run(["run", "--apns-key-file", path, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
                                    "--apns-topic", "com.example.app", "--amqp-url", "amqp://guest:guest@127.0.0.1:1/"])
        #expect(outcome.status != 0)
        #expect(outcome.output.contains("the APNs key is encrypted"))
        #expect(outcome.output.contains(path))
    }
}

extension CommandLineTests {
    /// `pushworker events --unrouted` prints the events kept while nobody was bound, and takes
    /// them out of the unrouted queue.
    @Test func eventsUnroutedPrintsAndRemovesTheKeptEvents() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.control.deleteQueue(fixture.eventQueue)
            try await fixture.publish(#"{"id":"kept-for-later","tokens":["\#(PipelineFixture.token(4100))"],"payload":{"aps":{"alert":"x"}}}"#)
            let unrouted = "\(fixture.resultsExchange).unrouted"
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, (try? await fixture.control.messageCount(queue: unrouted)) ?? 0 < 1 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let outcome = try Self.run(["events", "--unrouted", "--results-exchange", fixture.resultsExchange,
                                        "--amqp-url", PipelineFixture.amqpURL, "--count", "1", "--seconds", "30"])
            #expect(outcome.status == 0)
            #expect(outcome.output.contains("job.completed"))
            #expect(outcome.output.contains("kept-for-later"))
            #expect(try await fixture.control.messageCount(queue: unrouted) == 0)
        }
    }
}

/// `--log-format json`: every line the worker writes is one JSON object with the fixed keys and
/// the metadata keys of the text format.
@Suite struct JSONLogFormatTests {
    @Test func everyLineIsAJSONObjectWithTheMetadata() throws {
        let process = Process()
        process.executableURL = CommandLineTests.executable
        process.arguments = ["run", "--apns-key-file", try CommandLineTests.tokenKey(), "--apns-key-id", "ABCDE12345",
                             "--apns-team-id", "TEAM123456", "--apns-topic", "com.example.app", "--log-format", "json",
                             // Nothing listens on port 1: the worker logs its attempts and keeps trying.
                             "--amqp-url", "amqp://guest:guest@127.0.0.1:1/"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHWORKER_") }
        let output = Pipe()
        process.standardError = output
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
        var buffered = Data()
        var lines: [Substring] = []
        // Until the worker logged its start and a failed connect (a bound of 200 reads; each waits for output).
        for _ in 0..<200 where !(lines.contains { $0.contains("AMQP connect failed") } && lines.contains { $0.contains("worker started") }) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffered.append(chunk)
            lines = String(decoding: buffered, as: UTF8.self).split(separator: "\n")
        }
        #expect(lines.count >= 2)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["time"] is String && object?["level"] is String && object?["message"] is String && object?["label"] is String,
                    "\(line)")
        }
        let failed = try #require(lines.first { $0.contains("AMQP connect failed") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(failed.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "warning")
        #expect((object["amqp.endpoint"] as? String)?.contains("127.0.0.1:1") == true)
        #expect((object["amqp.endpoint"] as? String)?.contains("guest:guest") == false)
    }
}
