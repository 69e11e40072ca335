import HTTP2
import Testing

extension IntegrationSuite {
    /// Against nghttpd (Debian nghttp2-server), a real HTTP/2 server that is not our code.
    @Suite struct Nghttpd {
        @Test func getAndPostReturnStatusAndBody() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            // The echo below answers 200,000 bytes: above the default response limit of a push client.
            var configuration = pki.configuration(port: port)
            configuration.responseLimits.maxBodyBytes = 1 << 20
            try await withClient(configuration) { client in
                let get = try await client.send(HTTP2Request(method: "GET", path: "/hello.txt"))
                #expect(get.status == 200)
                #expect(get.text == "hello from nghttpd\n")

                let missing = try await client.send(HTTP2Request(method: "GET", path: "/missing"))
                #expect(missing.status == 404)

                // Larger than the 64 KiB default windows: exercises DATA flow control both ways.
                let upload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                let post = try await client.send(HTTP2Request(
                    method: "POST", path: "/echo",
                    headers: [HTTP2Header(name: "Content-Type", value: "application/octet-stream"),
                              HTTP2Header(name: "authorization", value: "bearer secret", neverIndex: true)],
                    body: upload))
                #expect(post.status == 200)
                #expect(post.body == upload)
                #expect(client.statistics.requestsCompleted == 3)
            }
        }

        @Test func onlyTheNamedResponseHeadersAreKept() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            let all = try await withClient(pki.configuration(port: port)) { client in
                try await client.send(HTTP2Request(method: "GET", path: "/hello.txt"))
            }
            #expect(Set(all.headers.map(\.name)).isSuperset(of: ["server", "content-length"]))
            var configuration = pki.configuration(port: port)
            configuration.keptResponseHeaders = ["Content-Length"]
            let kept = try await withClient(configuration) { client in
                try await client.send(HTTP2Request(method: "GET", path: "/hello.txt"))
            }
            #expect(kept.status == 200)
            #expect(kept.headers.map(\.name) == ["content-length"])
            #expect(kept.header("content-length") == "19")
        }

        @Test func fiveHundredConcurrentRequestsAllComplete() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            try await withClient(pki.configuration(port: port)) { client in
                let statuses = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                    for index in 0..<500 {
                        group.addTask {
                            let body = Array("request \(index)".utf8)
                            let response = try await client.send(HTTP2Request(method: "POST", path: "/echo", body: body))
                            return (response.status, response.body == body ? [1] : [0])
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1.0 == 200 && $1.1 == [1] ? 1 : 0) }
                }
                #expect(statuses.count == 500)
                let allEchoed = statuses.allSatisfy { $0 == 1 }
                #expect(allEchoed)
                let statistics = client.statistics
                #expect(statistics.requestsCompleted == 500)
                #expect(statistics.connectionsOpened >= 1 && statistics.connectionsOpened <= 4)
                #expect(statistics.queuedRequests == 0)
            }
        }

        @Test func certificateFromUntrustedCAIsRejected() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki, rogue: true)
            defer { server.stop() }
            let error = try await withClient(pki.configuration(port: port)) { client in
                try await expectFailure(client, HTTP2Request(path: "/hello.txt"))
            }
            #expect(error.code == .tlsFailed)
            #expect(error.requestWasNotProcessed)
        }

        @Test func withoutTheExtraCAFileTheTestCAIsNotTrusted() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.extraCAFile = nil
            let error = try await withClient(configuration) { client in
                try await expectFailure(client, HTTP2Request(path: "/hello.txt"))
            }
            #expect(error.code == .tlsFailed)
        }

        @Test func serverNameMismatchIsRejected() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            var configuration = pki.configuration(port: port, host: "127.0.0.1")
            configuration.serverName = "push.example.com"
            let error = try await withClient(configuration) { client in
                try await expectFailure(client, HTTP2Request(path: "/hello.txt"))
            }
            #expect(error.code == .tlsFailed)
        }

        @Test func ipLiteralIsVerifiedAgainstTheIPSubjectAltName() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            try await withClient(pki.configuration(port: port, host: "127.0.0.1")) { client in
                let response = try await client.send(HTTP2Request(path: "/hello.txt"))
                #expect(response.status == 200)
            }
        }

        @Test func serverWithoutH2FailsWithHTTP2NotOffered() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startTLSServerWithoutH2(pki)
            defer { server.stop() }
            let error = try await withClient(pki.configuration(port: port)) { client in
                try await expectFailure(client, HTTP2Request(path: "/"))
            }
            #expect(error.code == .http2NotOffered)
            #expect(error.requestWasNotProcessed)
            #expect(error.message.contains("ALPN"))
        }

        @Test func requestsGoThroughAnHTTPConnectProxy() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            let (proxy, proxyPort) = try await TestServers.startProxy()
            defer { proxy.stop() }
            var configuration = pki.configuration(port: port)
            configuration.proxy = HTTPProxy(host: "127.0.0.1", port: proxyPort, username: "user", password: "secret")
            try await withClient(configuration) { client in
                let response = try await client.send(HTTP2Request(path: "/hello.txt"))
                #expect(response.status == 200)
                #expect(response.text == "hello from nghttpd\n")
            }
            #expect(try await proxy.line(containing: "SAW ") == "SAW CONNECT localhost:\(port) HTTP/1.1")
            // base64("user:secret")
            #expect(try await proxy.line(containing: "AUTH ") == "AUTH Basic dXNlcjpzZWNyZXQ=")
        }

        @Test func idlePingsKeepAHealthyConnectionOpen() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.idlePingInterval = .milliseconds(100)
            // A PING without an ACK for this long closes the connection. Not shorter: on a loaded
            // machine (CI under a sanitizer) the first connection's TLS set-up took over 0.5 s,
            // and the request waiting for it timed out.
            configuration.requestTimeout = .seconds(3)
            try await withClient(configuration) { client in
                #expect(try await client.send(HTTP2Request(path: "/hello.txt")).status == 200)
                // Five PING rounds, each ACKed (observed, not slept for): the connection stays.
                try await waitUntil { client.statistics.pingsAcknowledged >= 5 }
                #expect(client.statistics.pingsAcknowledged >= 5)
                #expect(client.statistics.openConnections == 1)
                #expect(try await client.send(HTTP2Request(path: "/hello.txt")).status == 200)
                #expect(client.statistics.connectionsOpened == 1)
            }
        }

        @Test func idleConnectionsAboveMinimumAreClosed() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.minConnections = 0
            configuration.idleConnectionTimeout = .milliseconds(300)
            try await withClient(configuration) { client in
                #expect(try await client.send(HTTP2Request(path: "/hello.txt")).status == 200)
                // Counted, not sampled: on a loaded machine the 300 ms idle limit may already have
                // closed the connection by the time a sample of openConnections is taken.
                #expect(client.statistics.connectionsOpened == 1)
                try await waitUntil { client.statistics.openConnections == 0 }
                // The next request simply opens a new connection.
                #expect(try await client.send(HTTP2Request(path: "/hello.txt")).status == 200)
                #expect(client.statistics.connectionsOpened == 2)
            }
        }

        @Test func connectionRefusedFailsWithConnectFailed() async throws {
            let pki = try TestPKI.get()
            let port = try Network.freePort()
            try await withClient(pki.configuration(port: port)) { client in
                let first = try await expectFailure(client, HTTP2Request(path: "/"))
                #expect(first.code == .connectFailed)
                #expect(first.requestWasNotProcessed)
                // Within the backoff: the request waits for the next attempt, which fails too.
                let second = try await expectFailure(client, HTTP2Request(path: "/"))
                #expect(second.code == .connectFailed)
            }
        }
    }
}

/// Polls `condition` until it holds, failing after `timeout`.
func waitUntil(timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("condition not met within \(timeout)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

extension IntegrationSuite {
    @Suite struct ConnectionSetup {
        @Test func unresolvableHostFailsWithConnectFailed() async throws {
            let pki = try TestPKI.get()
            var configuration = pki.configuration(port: 443, host: "no-such-host.invalid")
            configuration.connectTimeout = .seconds(3)
            let error = try await withClient(configuration) { client in
                try await expectFailure(client, HTTP2Request(path: "/"))
            }
            #expect(error.code == .connectFailed)
            #expect(error.requestWasNotProcessed)
        }

        /// The proxy script waits for an HTTP header that a TLS ClientHello never completes:
        /// the handshake hangs until connectTimeout.
        @Test func silentServerFailsAfterConnectTimeout() async throws {
            let pki = try TestPKI.get()
            let (silent, port) = try await TestServers.startProxy()
            defer { silent.stop() }
            var configuration = pki.configuration(port: port)
            configuration.connectTimeout = .milliseconds(400)
            configuration.requestTimeout = .seconds(60)
            let start = ContinuousClock.now
            let error = try await withClient(configuration) { client in
                try await expectFailure(client, HTTP2Request(path: "/"))
            }
            // A handshake that never completes is a network problem, not refused credentials.
            #expect(error.code == .connectFailed)
            #expect(error.requestWasNotProcessed)
            #expect(error.message.contains("timed out"))
            // Ended by the connect timeout, not the request's 60 s.
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }
}
