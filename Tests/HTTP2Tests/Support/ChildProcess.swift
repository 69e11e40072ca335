import Foundation
import NIOConcurrencyHelpers

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects a child's stdout and stderr as text.
final class OutputBuffer: Sendable {
    private let text = NIOLockedValueBox("")
    func append(_ data: Data) { text.withLockedValue { $0 += String(decoding: data, as: UTF8.self) } }
    var contents: String { text.withLockedValue { $0 } }
}

/// A process the tests start; `stop()` (call it in a `defer`) terminates and reaps it.
final class ChildProcess: @unchecked Sendable {
    private let process = Process()
    let output = OutputBuffer()
    let name: String
    /// Set when started with `keepsInputOpen`: some tools quit at end of input, others take commands there.
    private let input: Pipe?

    init(_ executable: String, _ arguments: [String], keepsInputOpen: Bool = false) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestFailure("required tool \(executable) is missing (install the Debian package that provides it)")
        }
        name = (executable as NSString).lastPathComponent
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        input = keepsInputOpen ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        let output = output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                output.append(data)
            }
        }
        try process.run()
    }

    deinit { stop() }

    /// SIGKILL, not SIGTERM: children spawned from dispatch worker threads inherit their
    /// signal mask, in which SIGTERM is blocked.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Writes `text` to the child's standard input (started with `keepsInputOpen`).
    func send(_ text: String) throws {
        guard let input else { throw TestFailure("\(name) was started without an input pipe") }
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// Waits for a line containing `marker` and returns it: as long as the child runs, up to a
    /// bound only a hung child reaches (10 s was too short for python3 to start and import h2
    /// beside the whole suite under AddressSanitizer on 2 cores).
    func line(containing marker: String, timeout: Duration = .seconds(120)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.contents.split(separator: "\n").first(where: { $0.contains(marker) }) {
                return String(line)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("\(name) did not print \"\(marker)\"; output:\n\(output.contents)")
    }

    /// For servers that print "PORT <n>" once they listen.
    func announcedPort() async throws -> Int {
        let line = try await line(containing: "PORT ")
        guard let port = Int(line.split(separator: " ").last ?? "") else { throw TestFailure("bad port line \(line)") }
        return port
    }

    /// Runs a tool to completion; throws with its output if it fails.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let child = try ChildProcess(executable, arguments)
        child.process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.01)
        guard child.process.terminationStatus == 0 else {
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) failed:\n\(child.output.contents)")
        }
        return child.output.contents
    }
}
