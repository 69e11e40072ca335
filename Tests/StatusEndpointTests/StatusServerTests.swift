#if canImport(Glibc)
import Glibc
#endif
import Logging
import OwnerThread
import ServiceLifecycle
import StatusEndpoint
import Testing
@testable import Worker

/// The status endpoint over real sockets: what it answers, and the bounds that keep a
/// misbehaving client from holding the worker's fds and memory.
@Suite(.timeLimit(.minutes(1)))
struct StatusServerTests {
    /// Runs a status server on a free loopback port for `body`, then shuts it down.
    static func withServer<T: Sendable>(_ status: WorkerStatus, maxConnections: Int = 32, idleTimeout: Duration = .seconds(10),
                                        livenessLimit: Duration = StatusServer.defaultLivenessLimit,
                                        _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let (ports, portInput) = AsyncStream.makeStream(of: Int.self)
        let server = StatusServer(host: "127.0.0.1", port: 0, status: status, logger: Logger(label: "status-test"),
                                  maxConnections: maxConnections, idleTimeout: idleTimeout, listening: { portInput.yield($0) },
                                  livenessLimit: livenessLimit)
        let group = ServiceGroup(services: [server], logger: Logger(label: "status-test"))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            defer { tasks.cancelAll() }
            let result = try await body(port)
            await group.triggerGracefulShutdown()
            return result
        }
    }

    /// A blocking loopback client with a receive timeout (a bound on the test, not a measurement).
    final class Client {
        private(set) var descriptor: Int32
        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0)
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        deinit { disconnect() }

        func disconnect() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }

        func send(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }

        /// One read: a whole small response on loopback ("" if the server closed, nil on the timeout).
        func readSome() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor, &buffer, buffer.count)
            return count < 0 ? nil : String(decoding: buffer[..<count], as: UTF8.self)
        }

        /// Everything until the server closes the connection ("" if it closed without a byte).
        func readUntilClosed() -> String? {
            var bytes = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                // Closed; a reset too (a server closing with our request unread resets the connection).
                if count == 0 || (count < 0 && errno == ECONNRESET) { return String(decoding: bytes, as: UTF8.self) }
                if count < 0 { return nil }   // the receive timeout: still open
                bytes += buffer[..<count]
            }
        }
    }

    @Test func healthzAnswers503WithTheProblemAndStatusIsJSON() async throws {
        let status = WorkerStatus()
        status.setAMQPConnected(true)
        status.noteRedisFailure("WRONGTYPE Operation against a key holding the wrong kind of value")
        try await Self.withServer(status) { port in
            let health = try Client(port: port)
            health.send("GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            let answer = try #require(health.readUntilClosed())
            #expect(answer.hasPrefix("HTTP/1.1 503"))
            #expect(answer.contains("Redis: WRONGTYPE"))

            let document = try Client(port: port)
            document.send("GET /status HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            let json = try #require(document.readUntilClosed())
            #expect(json.hasPrefix("HTTP/1.1 200"))
            #expect(json.contains("\"healthy\":false"))
            #expect(json.contains("\"deferred\":0"))
        }
    }

    /// One app's refused credentials hold back that app only: /readyz stays 200 (another worker
    /// would meet the same refusal), /status says what is wrong. A pause of the whole worker is 503.
    @Test func oneAppsCredentialsLeaveTheWorkerReady() async throws {
        let status = WorkerStatus()
        status.setAMQPConnected(true)
        _ = status.credentialsFailed(app: "web", reason: "the push services refused the VAPID credentials")
        status.setPauses(["the platform refused the credentials of app web"], ofTheWorker: [])
        try await Self.withServer(status) { port in
            let ready = try Client(port: port)
            ready.send("GET /readyz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            #expect(try #require(ready.readUntilClosed()).hasPrefix("HTTP/1.1 200"))
            let document = try Client(port: port)
            document.send("GET /status HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            let json = try #require(document.readUntilClosed())
            #expect(json.contains("\"healthy\":false") && json.contains("\"ready\":true"))
            #expect(json.contains("VAPID credentials"))
        }
        status.setPauses(["job bodies in memory above the cap", "the platform refused the credentials of app web"],
                         ofTheWorker: ["job bodies in memory above the cap"])
        try await Self.withServer(status) { port in
            let ready = try Client(port: port)
            ready.send("GET /readyz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            let answer = try #require(ready.readUntilClosed())
            #expect(answer.hasPrefix("HTTP/1.1 503"))
            #expect(answer.contains("consumption paused: job bodies in memory above the cap"))
        }
    }

    /// /readyz (and /healthz) say whether jobs can flow; /livez only whether the loops turn, so a
    /// broker outage does not make an orchestrator restart the process.
    @Test func livezStaysUpThroughAnOutageAndNamesAStuckLoop() async throws {
        let status = WorkerStatus()   // not connected to RabbitMQ: not ready
        try await Self.withServer(status) { port in
            let ready = try Client(port: port)
            ready.send("GET /readyz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            #expect(try #require(ready.readUntilClosed()).hasPrefix("HTTP/1.1 503"))
            let live = try Client(port: port)
            live.send("GET /livez HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            #expect(try #require(live.readUntilClosed()).hasPrefix("HTTP/1.1 200"))
        }
        // A loop that left its wait and never came back: stuck past any limit below its age.
        let stuck = LoopHeartbeat(name: "test loop that never waits")
        stuck.running()
        try await Self.withServer(status, livenessLimit: .seconds(-1)) { port in
            let live = try Client(port: port)
            live.send("GET /livez HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            let answer = try #require(live.readUntilClosed())
            #expect(answer.hasPrefix("HTTP/1.1 503"))
            #expect(answer.contains("test loop that never waits"))
        }
        // Waiting, however long, is alive.
        stuck.waiting()
        #expect(!LoopHeartbeat.stuck(longerThan: .seconds(-1)).contains { $0.name == "test loop that never waits" })
    }

    @Test func connectionsAboveTheLimitAreClosedAtOnce() async throws {
        try await Self.withServer(WorkerStatus(), maxConnections: 2) { port in
            // Two held connections, each answered before the next connects (so both are counted).
            let first = try Client(port: port), second = try Client(port: port)
            first.send("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            #expect(first.readSome()?.hasPrefix("HTTP/1.1 503") == true)   // 503: nothing connected
            second.send("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            #expect(second.readSome()?.hasPrefix("HTTP/1.1 503") == true)
            let third = try Client(port: port)
            third.send("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            #expect(third.readUntilClosed() == "")
            // Once one of them goes, a new one is served.
            first.disconnect()
            var served = false
            for _ in 0..<100 where !served {
                let next = try Client(port: port)
                next.send("GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                served = next.readUntilClosed()?.hasPrefix("HTTP/1.1") == true
                if !served { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(served)
        }
    }

    @Test func anIdleConnectionIsClosed() async throws {
        try await Self.withServer(WorkerStatus(), idleTimeout: .milliseconds(200)) { port in
            let idle = try Client(port: port)
            // Nothing sent: the server closes it (the client's own 20 s receive timeout would give nil).
            #expect(idle.readUntilClosed() == "")
        }
    }
}
