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
