import Foundation
import Operations
import PushCore
import Testing

/// Reading a token file's lines, and what one line is, without Redis.
@Suite struct LineTests {
    private func lines(of text: [UInt8]) throws -> [LineReader.Line] {
        let path = NSTemporaryDirectory() + "ops-lines-\(UUID().uuidString).txt"
        try Data(text).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = try LineReader(path: path)
        var lines: [LineReader.Line] = []
        while let line = try reader.next() { lines.append(line) }
        #expect(reader.bytesRead == text.count)
        #expect(reader.totalBytes == text.count)
        return lines
    }

    private func text(_ string: String) -> LineReader.Line { .text(Array(string.utf8)[...]) }

    @Test func splitsOnNewlinesAndKeepsALastLineWithoutOne() throws {
        #expect(try lines(of: Array("a\nb\r\n\nc".utf8)) == [text("a"), text("b\r"), text(""), text("c")])
        #expect(try lines(of: Array("a\n".utf8)) == [text("a")])
        #expect(try lines(of: []) == [])
    }

    /// Lines across the 64 KiB reads come out whole.
    @Test func linesAcrossReadsAreWhole() throws {
        let line = String(repeating: "f", count: 100)
        let all = try lines(of: Array(Array(repeating: line, count: 2000).joined(separator: "\n").utf8))
        #expect(all.count == 2000)
        #expect(all.allSatisfy { $0 == text(line) })
    }

    /// A line longer than any device (no newline for megabytes) is reported by its length, not kept.
    @Test func aHugeLineIsReadPast() throws {
        let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 300_000)
        let all = try lines(of: Array("ok\n".utf8) + huge + Array("\nafter".utf8))
        #expect(all == [text("ok"), .tooLong(bytes: 300_000), text("after")])
    }

    @Test func aLineIsADeviceBlankOrBad() {
        let rules = DevicePlatform.apns.rules
        let token = String(repeating: "0a", count: 32)
        #expect(TokenLine(" \(token)\t\r", rules: rules) == .device(DeviceToken(trustedHex: token)))
        #expect(TokenLine(" \r", rules: rules) == .blank)
        #expect(TokenLine("", rules: rules) == .blank)
        guard case .bad(let problem) = TokenLine("xyz", rules: rules) else {
            Issue.record("xyz is no APNs token")
            return
        }
        // The problem never repeats the line (it may be a token of another app).
        #expect(problem.contains("got 3 characters"))
        #expect(!problem.contains("xyz"))
        if case .device = TokenLine("dV1lY2Fyb2xpbmE:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx", rules: DevicePlatform.fcm.rules) {} else {
            Issue.record("an FCM registration token is an FCM device")
        }
    }

    @Test func thePlatformOptionIsChecked() throws {
        #expect(try DevicePlatform(option: "webpush") == .webpush)
        let error = #expect(throws: OperationError.self) { try DevicePlatform(option: "gcm") }
        #expect(error?.description == "--platform must be apns, fcm or webpush, got \"gcm\"")
    }
}
