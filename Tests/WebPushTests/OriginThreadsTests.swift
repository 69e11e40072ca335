import Foundation
import Glibc
import HTTP2
import PushCore
import PushTransport
import Testing
import WebPush
import WebPushCore

/// Subscriptions name any origin they like, and each origin's pool is an I/O thread: 400 origins
/// once left a worker with 1,200 more threads, never released. Now the pools stay within
/// `maxOrigins`, and once idle they shut down and their threads exit.
@Suite(.serialized) struct OriginThreadsTests {
    /// This test's origin pools' threads, by their name: the test process runs other suites'
    /// threads beside it, which come and go.
    static let threadName = "wp-threads-test"

    static func threadCount() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.count(where: { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == threadName
        })
    }

    /// Ports bound on 127.0.0.1 but not listening: a connect to one is refused at once.
    static func closedPorts(_ count: Int) throws -> (ports: [Int], sockets: [Int32]) {
        var ports: [Int] = [], sockets: [Int32] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard bound == 0, named == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
            sockets.append(fd)
        }
        return (ports, sockets)
    }

    @Test func fourHundredOriginsLeaveNoThreadsBehind() async throws {
        let fixture = try await ClientSandboxTests.Fixture {
            $0.idleConnectionTimeout = .seconds(1)
            $0.connectTimeout = .seconds(5)
            $0.ioThreadName = Self.threadName
        }
        let good = try #require(try fixture.sandbox.subscribe(count: 1).first)
        #expect(await fixture.send(fixture.job("{}"), to: good).outcome == .sent)
        let (ports, sockets) = try Self.closedPorts(400)
        defer { for fd in sockets { close(fd) } }
        let baseline = Self.threadCount()

        let keys = "#p256dh=\(good.p256dh)&auth=\(good.auth)"
        let job = fixture.job("{}")
        let client = fixture.client
        let results = await withTaskGroup(of: PushResult.self) { group in
            for port in ports {
                group.addTask {
                    let device = try! WebPushJobRules().device(from: .string("https://127.0.0.1:\(port)/x\(keys)"))
                    return await withCheckedContinuation { continuation in
                        client.send(job, to: device, requestID: "unused") { continuation.resume(returning: $0) }
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 400)
        #expect(results.allSatisfy { $0.outcome != .sent })
        #expect(results.contains { $0.reason == "TooManyOrigins" }, "more origins than pools at once")
        #expect(fixture.client.origins <= WebPushConfiguration(vapidKey: fixture.key, subject: try .init("mailto:a@b.c")).maxOrigins)
        let peak = Self.threadCount()

        // Idle for the timeout: every pool shuts down and its thread exits (observed, bounded wait).
        let deadline = ContinuousClock.now + .seconds(60)
        // A pool's shutdown returns once its thread let go of everything; the thread itself ends a
        // moment later, so its exit is waited for too.
        while (fixture.client.origins > 0 || fixture.client.closingPools > 0 || Self.threadCount() > 0), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(fixture.client.origins == 0 && fixture.client.closingPools == 0)
        let after = Self.threadCount()
        // One pool is the good origin's, idle too by now; 400 pools would be 400.
        #expect(after == 0, "threads: \(baseline) before, \(peak) at the peak, \(after) after")
        #expect(peak >= 1 && peak <= 64, "threads: \(baseline) before, \(peak) at the peak (at most max_origins)")
        await fixture.close()
    }
}
