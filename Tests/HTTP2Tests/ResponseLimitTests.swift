import Foundation
import HTTP2
import Testing

extension IntegrationSuite {
    /// A hostile server's answer costs at most the client's `HTTP2ResponseLimits`: an endless body
    /// or a header flood resets that stream (RST_STREAM) and fails its request, and the connection
    /// goes on serving the others. Against Resources/h2_test_server.py, not our code.
    @Suite struct ResponseLimits {
        struct Counters: Decodable {
            var resets: Int
            var flood_bytes: [Int]
            var connections: Int
        }

        static func counters(_ client: HTTP2Client) async throws -> Counters {
            let response = try await client.send(HTTP2Request(path: "/stats"))
            return try JSONDecoder().decode(Counters.self, from: Data(response.body))
        }

        /// Before the limit, the client kept every byte of a 201 whose body never ended (a worker
        /// went from 33 MB to 4.4 GB in 20 s); the stream is now reset once the body passes the limit.
        @Test func anEndlessBodyResetsItsStreamAndFailsTheRequest() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, [])
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.maxConnections = 1
            configuration.responseLimits.maxBodyBytes = 4096
            try await withClient(configuration) { client in
                let error = try await expectFailure(client, HTTP2Request(path: "/flood"))
                #expect(error.code == .responseTooLarge, "\(error)")
                #expect(error.message.contains("HTTP 201") && error.message.contains("4096"), "\(error.message)")
                // The same connection serves the next request.
                let next = try await client.send(HTTP2Request(method: "POST", path: "/after", body: Array("ok".utf8)))
                #expect(next.status == 200 && next.body == Array("ok".utf8))
                let counters = try await Self.counters(client)
                #expect(counters.connections == 1)
                #expect(counters.flood_bytes.count == 1, "the server saw its stream reset: \(counters)")
                // It stopped at the reset: within the flow-control windows the client had granted
                // (1 MiB per stream), far from the 256 MiB it would otherwise have sent.
                #expect((counters.flood_bytes.first ?? .max) < 8 << 20, "\(counters.flood_bytes)")
                // What the push transports make of it: PushResultTests.aResponseTooLargeIsTheDevicesFailure.
            }
        }

        @Test func tooManyOrTooLongHeadersResetTheStream() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, [])
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.maxConnections = 1
            try await withClient(configuration) { client in
                let many = try await expectFailure(client, HTTP2Request(path: "/many-headers"))
                #expect(many.code == .responseTooLarge && many.message.contains("more than 32 kept headers"), "\(many)")
                let long = try await expectFailure(client, HTTP2Request(path: "/long-header"))
                #expect(long.code == .responseTooLarge && long.message.contains("longer than 2048 bytes"), "\(long)")
                let next = try await client.send(HTTP2Request(path: "/after"))
                #expect(next.status == 200)
                let counters = try await Self.counters(client)
                #expect(counters.connections == 1)
            }
            // A client that keeps only the headers it reads ignores the others, however many.
            configuration.keptResponseHeaders = ["location"]
            try await withClient(configuration) { client in
                let response = try await client.send(HTTP2Request(path: "/many-headers"))
                #expect(response.status == 200)
            }
        }
    }
}
