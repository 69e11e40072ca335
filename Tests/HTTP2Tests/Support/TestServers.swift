import Foundation
import HTTP2
import Logging

/// The peers the tests talk to; every one listens on 127.0.0.1 only.
enum TestServers {
    static let nghttpd = "/usr/sbin/nghttpd"
    static let python = "/usr/bin/python3"

    static func resource(_ name: String) throws -> String {
        guard let url = Bundle.module.url(forResource: "Resources/\(name)", withExtension: nil) else {
            throw TestFailure("missing test resource \(name)")
        }
        return url.path
    }

    /// nghttpd over TLS with `--echo-upload` and a docroot holding hello.txt.
    static func startNghttpd(_ pki: TestPKI, rogue: Bool = false) async throws -> (ChildProcess, Int) {
        let port = try Network.freePort()
        let server = try ChildProcess(nghttpd, [
            "--address=127.0.0.1", "--echo-upload", "-d", pki.docroot, "\(port)",
            rogue ? pki.rogueServerKey : pki.serverKey, rogue ? pki.rogueServerCertificate : pki.serverCertificate,
        ])
        do {
            try await Network.waitUntilListening(port: port, process: server)
        } catch {
            server.stop()
            throw error
        }
        return (server, port)
    }

    /// Resources/h2_test_server.py (python3-h2) with the given extra arguments.
    static func startH2Server(_ pki: TestPKI, _ arguments: [String] = []) async throws -> (ChildProcess, Int) {
        let server = try ChildProcess(python, [
            try resource("h2_test_server.py"), "--cert", pki.serverCertificate, "--key", pki.serverKey,
        ] + arguments)
        do {
            return (server, try await server.announcedPort())
        } catch {
            server.stop()
            throw error
        }
    }

    static func startProxy() async throws -> (ChildProcess, Int) {
        let proxy = try ChildProcess(python, [try resource("connect_proxy.py")])
        do {
            return (proxy, try await proxy.announcedPort())
        } catch {
            proxy.stop()
            throw error
        }
    }

    /// `openssl s_server -www`: TLS, but no ALPN, so no h2.
    static func startTLSServerWithoutH2(_ pki: TestPKI) async throws -> (ChildProcess, Int) {
        let port = try Network.freePort()
        let server = try ChildProcess(TestPKI.openssl, [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", pki.serverCertificate, "-key", pki.serverKey,
            "-www", "-quiet",
        ])
        do {
            try await Network.waitUntilListening(port: port, process: server)
        } catch {
            server.stop()
            throw error
        }
        return (server, port)
    }
}

extension TestPKI {
    /// A client configuration that trusts the test CA, with short timeouts for tests.
    func configuration(port: Int, host: String = "localhost") -> HTTP2ClientConfiguration {
        var configuration = HTTP2ClientConfiguration(host: host, port: port)
        configuration.extraCAFile = caCertificate
        configuration.connectTimeout = .seconds(5)
        configuration.requestTimeout = .seconds(10)
        return configuration
    }
}

let testLogger: Logger = {
    var logger = Logger(label: "http2-tests")
    logger.logLevel = ProcessInfo.processInfo.environment["HTTP2_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
    return logger
}()

/// Runs `body` with a client and always shuts the client down afterwards.
func withClient<T>(_ configuration: HTTP2ClientConfiguration,
                   _ body: (HTTP2Client) async throws -> T) async throws -> T {
    let client = HTTP2Client(configuration: configuration, logger: testLogger)
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch {
        await client.shutdown()
        throw error
    }
}

/// The error a request failed with, or a test failure if it succeeded.
func expectFailure(_ client: HTTP2Client, _ request: HTTP2Request) async throws -> HTTP2Error {
    do {
        let response = try await client.send(request)
        throw TestFailure("expected a failure, got status \(response.status)")
    } catch let error as HTTP2Error {
        return error
    }
}

extension HTTP2Response {
    var text: String { String(decoding: body, as: UTF8.self) }
}
