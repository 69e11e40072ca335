import Foundation

/// Runs a Python program with the pinned peers (http-ece, pywebpush, PyJWT, google-auth) from the
/// venv that `ops/python-peers.sh` makes. A missing venv fails the test: these checks are the only ones by
/// code that is not ours, so they must not quietly disappear.
public enum PythonPeer {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "\(path) is missing: run ops/python-peers.sh (it makes the venv with the pinned peers)" }
    }

    /// `<package root>/.build/python-peers/bin/python3`, the root found from this file's path.
    public static var interpreter: String {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }   // the file, PythonPeer, Tests
        return root.appendingPathComponent(".build/python-peers/bin/python3").path
    }

    /// Runs `program` (Python source) with `arguments` as `sys.argv[1...]`.
    public static func run(_ program: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> Result {
        let python = interpreter
        guard FileManager.default.isExecutableFile(atPath: python) else { throw Missing(path: python) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", program] + arguments
        // Output into files: a pipe nobody reads while waiting could fill and stall the child.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("python-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds))) {
                if process.isRunning { process.terminate() }
            }
        }
        try out.close()
        try err.close()
        return Result(status: status,
                      stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}
