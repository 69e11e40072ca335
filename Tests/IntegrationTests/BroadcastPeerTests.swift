import APNs
import APNsCore
import Foundation
import Glibc
import NIOConcurrencyHelpers
import PushCore
import PushTransport
import Sandbox
import Testing
import WorkerConfigurationFile

/// The channel-management and broadcast requests as a peer that is not our code sees them:
/// nghttpd (Debian's nghttp2-server) logs every header it receives (`-v`) and echoes the body
/// (`--echo-upload`), on 127.0.0.1 with the sandbox's server certificate.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct BroadcastPeerTests {
    final class Output: Sendable {
        private let text = NIOLockedValueBox("")
        func append(_ data: Data) { text.withLockedValue { $0 += String(decoding: data, as: UTF8.self) } }
        var lines: [String] { text.withLockedValue { $0.split(separator: "\n").map(String.init) } }
    }

    /// A port free a moment ago (nghttpd takes no port 0).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `request(_:in:)` once nghttpd's log shows the request with at least `bodyBytes` of DATA:
    /// its log reaches the pipe after the answer may have reached the client. Up to 10 s, then
    /// whatever was logged.
    static func loggedRequest(_ path: String, bodyBytes: Int, in output: Output) async throws -> (headers: [String: String], bodyBytes: Int)? {
        for _ in 0..<200 {
            if let logged = request(path, in: output), logged.bodyBytes >= bodyBytes { return logged }
            try await Task.sleep(for: .milliseconds(50))
        }
        return request(path, in: output)
    }

    /// What nghttpd logged of the request whose `:path` is `path`: its headers by name, and the
    /// bytes of its DATA frames. Lines read `[id=<connection>] [<time>] recv (stream_id=<n>[, sensitive]) <name>: <value>`
    /// and `recv DATA frame <length=<n>, flags=…, stream_id=<n>>`.
    static func request(_ path: String, in output: Output) -> (headers: [String: String], bodyBytes: Int)? {
        func connection(_ line: String) -> Substring? {
            guard line.hasPrefix("[id=") else { return nil }
            return line.dropFirst(4).prefix { $0 != "]" }
        }
        let lines = output.lines
        let headers = lines.compactMap { line -> (request: String, name: String, value: String)? in
            guard let id = connection(line), let range = line.range(of: "recv (stream_id=") else { return nil }
            let rest = line[range.upperBound...]
            // "(stream_id=1)" or, for a header sent never-indexed, "(stream_id=1, sensitive)".
            guard let close = rest.firstIndex(of: ")") else { return nil }
            let stream = rest[..<close].prefix { $0 != "," }
            let header = rest[rest.index(after: close)...].drop { $0 == " " }
            guard let colon = header.dropFirst().firstIndex(of: ":") else { return nil }   // pseudo-headers start with ':'
            return ("\(id)/\(stream)", String(header[..<colon]), String(header[header.index(after: colon)...].drop { $0 == " " }))
        }
        guard let request = headers.first(where: { $0.name == ":path" && $0.value == path })?.request else { return nil }
        let bodyBytes = lines.reduce(0) { total, line in
            guard let id = connection(line), let range = line.range(of: "recv DATA frame <length=") else { return total }
            let fields = line[range.upperBound...]
            let length = Int(fields.prefix { $0.isNumber }) ?? 0
            let stream = fields.range(of: "stream_id=").map { fields[$0.upperBound...].prefix { $0.isNumber } } ?? ""
            return "\(id)/\(stream)" == request ? total + length : total
        }
        return (Dictionary(headers.filter { $0.request == request }.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }), bodyBytes)
    }

    @Test func nghttpdSeesAppleShapedChannelAndBroadcastRequests() async throws {
        try await PipelineFixture.with { fixture in
            let material = fixture.sandbox.material
            let port = try Self.freePort()
            let output = Output()
            let process = Process()
            // Line-buffered: nghttpd's log to a pipe would otherwise wait in its stdio buffer.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
            process.arguments = ["-oL", "/usr/sbin/nghttpd", "-v", "--echo-upload", "--address=127.0.0.1", "\(port)", material.serverPrivateKeyFile, material.serverCertificateFile]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            pipe.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
            try process.run()
            defer {
                // The process this test started, by its pid.
                kill(process.processIdentifier, SIGKILL)
                pipe.fileHandleForReading.readabilityHandler = nil
            }
            var apns = try #require(try fixture.workerConfiguration()[apns: "default"])
            apns.url = "https://127.0.0.1:\(port)"
            apns.broadcastManagementURL = "https://127.0.0.1:\(port)"
            let manager = try APNsChannelManager(configuration: apns, logger: fixture.logger)
            // nghttpd echoes the body with 200 and no apns-channel-id: the create reads as refused.
            var created: String?
            for _ in 0..<100 where created == nil {
                do throws(APNsChannelError) {
                    _ = try await manager.create(storagePolicy: .noStorage)
                } catch where error.status == 0 {
                    try await Task.sleep(for: .milliseconds(100))   // nghttpd not listening yet
                    continue
                } catch {
                    created = error.reason
                }
            }
            #expect(created == "the answer named no usable apns-channel-id")
            let body = #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#
            let loggedCreate = try await Self.loggedRequest("/1/apps/com.example.app/channels", bodyBytes: body.utf8.count, in: output)
            let (create, createBody) = try #require(loggedCreate)
            #expect(create[":method"] == "POST" && create["content-type"] == "application/json")
            #expect(create["authorization"]?.hasPrefix("bearer ") == true)
            #expect(createBody == body.utf8.count)
            await manager.shutdown()

            let client = try APNsClient(configuration: apns, logger: fixture.logger)
            let job = try JobParser(rules: APNsJobRules()).parse(
                Array(#"{"channel":"dHN0LXNyY2gtY2hubA==","priority":5,"expiration":1767229200,"live_activity":{"event":"update","timestamp":1700000000,"content_state":{"s":1}}}"#.utf8),
                messageID: nil, now: 1_700_000_000, makeID: { "b" })
            let requestID = "0b2f7a1e-3c9d-4e8a-9f61-2d7c5b4a3e10"
            let result: PushResult = await withCheckedContinuation { continuation in
                client.send(job, to: job.tokens[0], requestID: requestID) { continuation.resume(returning: $0) }
            }
            #expect(result.status == 200 && result.outcome == .sent, "nghttpd echoes a POST with 200")
            let loggedBroadcast = try await Self.loggedRequest("/4/broadcasts/apps/com.example.app", bodyBytes: job.payload.count, in: output)
            let (broadcast, broadcastBody) = try #require(loggedBroadcast)
            #expect(broadcastBody == job.payload.count)
            #expect(broadcast[":method"] == "POST")
            #expect(broadcast["apns-channel-id"] == "dHN0LXNyY2gtY2hubA==")
            #expect(broadcast["apns-push-type"] == "liveactivity")
            #expect(broadcast["apns-priority"] == "5")
            #expect(broadcast["apns-expiration"] == "1767229200")
            #expect(broadcast["apns-request-id"] == requestID)
            #expect(broadcast["apns-topic"] == nil, "the bundle ID is in the path")
            #expect(broadcast["authorization"]?.hasPrefix("bearer ") == true)
            await client.shutdown()
        }
    }
}
