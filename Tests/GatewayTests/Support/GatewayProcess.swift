import AMQP
import Foundation
import Glibc
import Testing

/// The real `pushworker gateway` executable (built next to this test bundle) started with a
/// configuration file, its log in a file of its own; stopped with SIGTERM at the end.
final class GatewayProcess {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushworker")
    }

    let process = Process()
    let log: URL
    private(set) var port = 0

    init(config: URL, environment: [String: String]) throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.executable.path), "build the package first: \(Self.executable.path)")
        log = config.deletingPathExtension().appendingPathExtension("log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let output = try FileHandle(forWritingTo: log)
        process.executableURL = Self.executable
        process.arguments = ["gateway", "--config", config.path, "--listen", "127.0.0.1:0"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHWORKER_") }.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// Runs `body` with a started gateway that listens and is connected to the broker.
    static func with(config: URL, environment: [String: String], _ body: (GatewayProcess) async throws -> Void) async throws {
        let gateway = try GatewayProcess(config: config, environment: environment)
        defer { gateway.stop() }
        let line = try await gateway.waitForLog("gateway listening")
        let port = line.split(separator: " ").first { $0.hasPrefix("listen=127.0.0.1:") }.flatMap { Int($0.dropFirst("listen=127.0.0.1:".count)) }
        gateway.port = try #require(port, "no port in \(line)")
        for _ in 0..<300 {
            if try await gateway.get("/healthz").body.contains(#""amqp":"connected""#) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await body(gateway)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The `occurrence`th log line holding `text`, waited for (at most 60 s, a bound on the test);
    /// fails at once if the gateway exited.
    @discardableResult
    func waitForLog(_ text: String, occurrence: Int = 1) async throws -> String {
        for _ in 0..<600 {
            let lines = logText.split(separator: "\n").filter { $0.contains(text) }
            if lines.count >= occurrence { return String(lines[occurrence - 1]) }
            guard process.isRunning else {
                Issue.record("the gateway exited (status \(process.terminationStatus)) before logging \"\(text)\":\n\(logText.suffix(2000))")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("no \"\(text)\" in the gateway's log within 60 s:\n\(logText.suffix(2000))")
        throw CancellationError()
    }

    func get(_ path: String) async throws -> LoopbackHTTP.Answer {
        try await LoopbackHTTP.send(port: port, .GET, path)
    }

    func postJob(app: String, key: String) async throws -> LoopbackHTTP.Answer {
        let job = #"{"app":"\#(app)","tokens":["\#(RelayPost.token)"],"payload":{"aps":{"alert":"hi"}}}"#
        return try await LoopbackHTTP.send(port: port, .POST, "/v1/jobs", headers: [("Authorization", "Bearer \(key)")], body: Array(job.utf8))
    }
}
