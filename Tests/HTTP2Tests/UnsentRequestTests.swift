import Foundation
import HTTP2
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A request the server never saw must say so (`requestWasNotProcessed`), so the worker can treat
/// an outage as an outage and not use up the device's attempts.
@Suite("Requests that were never sent")
struct UnsentRequestTests {
    /// A socket that listens but never accepts: TCP connects (the kernel's backlog), TLS never answers.
    private final class SilentListener {
        let fd: Int32
        let port: Int
        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ready = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, pointer, &length) == 0
                }
            }
            guard descriptor >= 0, ready else { throw TestFailure("cannot listen") }
            fd = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }
        deinit { close(fd) }
    }

    @Test func aRequestStillQueuedAtItsDeadlineIsUnsent() async throws {
        let listener = try SilentListener()
        let pki = try TestPKI.get()
        var configuration = pki.configuration(port: listener.port, host: "127.0.0.1")
        configuration.connectTimeout = .seconds(20)
        configuration.requestTimeout = .milliseconds(400)
        try await withClient(configuration) { client in
            let error = try await expectFailure(client, HTTP2Request(path: "/queued"))
            #expect(error.code == .unsent)
            #expect(error.requestWasNotProcessed)
        }
    }

    /// A server that reads the ClientHello and hangs up (a restart, a load balancer draining): a
    /// network problem the request never reached, not a TLS refusal (which would pause the app as
    /// for bad credentials). Each connection is closed one way: FIN, then a reset.
    @Test(arguments: [false, true]) func aServerThatHangsUpDuringTheHandshakeIsANetworkProblem(reset: Bool) async throws {
        let listener = try SilentListener()
        let descriptor = listener.fd
        let hangUp = Thread {
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                var hello = [UInt8](repeating: 0, count: 4096)
                _ = read(connection, &hello, hello.count)
                if reset {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                close(connection)
            }
        }
        hangUp.start()
        let pki = try TestPKI.get()
        var configuration = pki.configuration(port: listener.port, host: "127.0.0.1")
        configuration.connectTimeout = .seconds(20)
        configuration.requestTimeout = .seconds(20)
        try await withClient(configuration) { client in
            let error = try await expectFailure(client, HTTP2Request(path: "/hang-up"))
            #expect(error.code == .connectFailed)
            #expect(error.requestWasNotProcessed)
        }
        shutdown(descriptor, Int32(SHUT_RDWR))   // ends the accept loop
    }

    @Test func aTLSHandshakeThatTimesOutIsANetworkProblem() async throws {
        let listener = try SilentListener()
        let pki = try TestPKI.get()
        var configuration = pki.configuration(port: listener.port, host: "127.0.0.1")
        configuration.connectTimeout = .milliseconds(300)
        configuration.requestTimeout = .seconds(20)
        try await withClient(configuration) { client in
            let error = try await expectFailure(client, HTTP2Request(path: "/handshake"))
            #expect(error.code == .connectFailed)
            #expect(error.requestWasNotProcessed)
        }
    }
}
