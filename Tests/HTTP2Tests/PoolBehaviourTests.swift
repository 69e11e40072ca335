import Foundation
import HTTP2
import Testing

extension IntegrationSuite {
    /// Against Resources/h2_test_server.py (python3-h2), which misbehaves on request.
    @Suite struct PoolBehaviour {
        struct ServerStatistics: Decodable {
            var connections: Int
            var requests: Int
            var max_concurrent: Int
            var goaways: Int
            var client_subjects: [String]
        }

        static func serverStatistics(_ client: HTTP2Client) async throws -> ServerStatistics {
            let response = try await client.send(HTTP2Request(path: "/stats"))
            return try JSONDecoder().decode(ServerStatistics.self, from: Data(response.body))
        }

        static func sendConcurrently(_ client: HTTP2Client, count: Int, method: String = "GET") async -> [Result<HTTP2Response, HTTP2Error>] {
            await withTaskGroup(of: Result<HTTP2Response, HTTP2Error>.self) { group in
                for index in 0..<count {
                    group.addTask {
                        do throws(HTTP2Error) {
                            return .success(try await client.send(HTTP2Request(method: method, path: "/r\(index)")))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }

        @Test func peerLimitOfOneStreamIsNeverExceeded() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--max-streams", "1", "--delay", "0.003"])
            defer { server.stop() }
            try await withClient(pki.configuration(port: port)) { client in
                let results = await Self.sendConcurrently(client, count: 40, method: "POST")
                #expect(results.count == 40)
                let allAnswered200 = results.allSatisfy { (try? $0.get().status) == 200 }
                #expect(allAnswered200)
                let statistics = try await Self.serverStatistics(client)
                #expect(statistics.max_concurrent == 1)
                #expect(statistics.requests == 41)
            }
        }

        /// Like APNs: one stream at first, a larger limit in a later SETTINGS frame. The capacity
        /// callers size their flow control from follows: the local cap before the server said
        /// anything, then the server's live SETTINGS_MAX_CONCURRENT_STREAMS.
        @Test func raisedPeerLimitIsUsedButNeverExceeded() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(
                pki, ["--max-streams", "1", "--raise-streams-to", "4", "--delay", "0.003"])
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.maxConnections = 1
            configuration.maxStreamsPerConnection = 50
            try await withClient(configuration) { client in
                #expect(client.streamCapacity == 50)
                let results = await Self.sendConcurrently(client, count: 60, method: "POST")
                let allAnswered200 = results.allSatisfy { (try? $0.get().status) == 200 }
                #expect(allAnswered200)
                let statistics = try await Self.serverStatistics(client)
                #expect(statistics.max_concurrent > 1)
                #expect(statistics.max_concurrent <= 4)
                #expect(statistics.connections == 1)
                try await waitUntil { client.streamCapacity == 4 }
                #expect(client.statistics.streamCapacity == 4)
            }
        }

        @Test func goAwayRefusedStreamsAreResubmittedOnANewConnection() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--mode", "goaway", "--goaway-after", "10"])
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.maxConnections = 1
            try await withClient(configuration) { client in
                let results = await Self.sendConcurrently(client, count: 25)
                #expect(results.count == 25)
                for result in results {
                    #expect((try? result.get().status) == 200, "\(result)")
                }
                let statistics = client.statistics
                #expect(statistics.goAwaysReceived >= 2)
                #expect(statistics.connectionsOpened >= 3)
                #expect(statistics.requestsCompleted == 25)
            }
        }

        @Test func refusedStreamsAreResubmittedThreeTimesThenFail() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--mode", "refuse"])
            defer { server.stop() }
            try await withClient(pki.configuration(port: port)) { client in
                let error = try await expectFailure(client, HTTP2Request(path: "/refused"))
                #expect(error.code == .refused)
                #expect(error.requestWasNotProcessed)
                let statistics = try await Self.serverStatistics(client)
                #expect(statistics.requests == 1 + 3 + 1)
            }
        }

        @Test func stalledServerFailsRequestWithTimeout() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--mode", "stall"])
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            // Long enough for the connection's set-up on a loaded machine: a request still waiting
            // for it at the deadline would be `.unsent`, not the `.timeout` of a sent one.
            configuration.requestTimeout = .seconds(3)
            try await withClient(configuration) { client in
                let start = ContinuousClock.now
                let error = try await expectFailure(client, HTTP2Request(path: "/never"))
                let elapsed = ContinuousClock.now - start
                #expect(error.code == .timeout)
                #expect(!error.requestWasNotProcessed)
                // Not before its deadline (the upper side is the 30 s default it must not wait for).
                #expect(elapsed >= .milliseconds(2950) && elapsed < .seconds(30))
                // The stream is reset (RST_STREAM CANCEL) and released right after.
                try await waitUntil { client.statistics.streamsInFlight == 0 }
            }
        }

        @Test func connectionResetMidStreamFailsWithConnectionLost() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--mode", "reset"])
            defer { server.stop() }
            try await withClient(pki.configuration(port: port)) { client in
                let error = try await expectFailure(client, HTTP2Request(method: "POST", path: "/reset", body: Array("x".utf8)))
                #expect(error.code == .connectionLost)
                #expect(!error.requestWasNotProcessed)
            }
        }

        @Test func missingPingAckClosesTheConnection() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--mode", "freeze"])
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.idlePingInterval = .milliseconds(200)
            // The first request waits for the connection's set-up: on a loaded machine that took
            // over 0.5 s. The unanswered PING then closes the connection 3 s after it was sent.
            configuration.requestTimeout = .seconds(3)
            try await withClient(configuration) { client in
                #expect(try await client.send(HTTP2Request(path: "/first")).status == 200)
                #expect(client.statistics.openConnections == 1)
                try await waitUntil { client.statistics.openConnections == 0 }
                #expect(client.statistics.pingsAcknowledged == 0)
            }
        }

        @Test func shutdownFailsInFlightAndLaterRequests() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--mode", "stall"])
            defer { server.stop() }
            let client = HTTP2Client(configuration: pki.configuration(port: port), logger: testLogger)
            let outcome = OutcomeBox()
            client.send(HTTP2Request(path: "/pending")) { outcome.set($0) }
            try await waitUntil { client.statistics.streamsInFlight == 1 }
            await client.shutdown()
            #expect(outcome.error?.code == .shutdown)
            let late = try await expectFailure(client, HTTP2Request(path: "/late"))
            #expect(late.code == .shutdown)
        }

        @Test func authorityAndMethodReachTheServer() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki)
            defer { server.stop() }
            try await withClient(pki.configuration(port: port)) { client in
                let response = try await client.send(HTTP2Request(method: "PUT", path: "/x", body: Array("payload".utf8)))
                #expect(response.status == 200)
                #expect(response.header("X-Authority") == "localhost:\(port)")
                #expect(response.header("x-method") == "PUT")
                #expect(response.text == "payload")
            }
        }
    }
}

/// Captures a completion-handler result across threads.
final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<HTTP2Response, HTTP2Error>?

    func set(_ result: Result<HTTP2Response, HTTP2Error>) { lock.withLock { self.result = result } }

    var error: HTTP2Error? {
        lock.withLock {
            if case .failure(let error) = result { return error }
            return nil
        }
    }
}
