import Foundation

/// Runs a client that is not our code (curl, nghttp, h2load, openssl). A missing tool is an error,
/// never a skip; a tool that outlives `timeout` is terminated so no test leaves processes behind.
struct ExternalTool {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        let elapsed: Duration
    }

    struct Missing: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(self.name) is not installed (apt-get install curl nghttp2-client openssl)" }
    }

    static func path(of name: String) throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories + ["/usr/bin", "/usr/local/bin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Missing(name: name)
    }

    static func run(_ name: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try self.path(of: name))
        process.arguments = arguments
        // Files, not pipes: a chatty tool can't block on a full pipe buffer.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("out")
        let errURL = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice

        let start = ContinuousClock.now
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + Double(timeout.components.seconds)) {
                if process.isRunning, process.processIdentifier == pid { process.terminate() }
            }
        }
        try out.close()
        try err.close()
        return Result(
            status: status,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "",
            elapsed: start.duration(to: .now)
        )
    }
}
