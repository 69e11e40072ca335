import Foundation
import HTTP2
import Testing

extension IntegrationSuite {
    /// `onlyGlobalAddresses`: a host that is, or resolves to, a loopback address is never
    /// connected to; the listener behind it counts the connections it saw.
    @Suite struct GlobalAddresses {
        func configuration(host: String, port: Int, onlyGlobal: Bool) throws -> HTTP2ClientConfiguration {
            var configuration = try TestPKI.get().configuration(port: port, host: host)
            configuration.onlyGlobalAddresses = onlyGlobal
            configuration.connectTimeout = .seconds(5)
            configuration.requestTimeout = .seconds(5)
            return configuration
        }

        @Test(arguments: ["127.0.0.1", "localhost", "2130706433"])
        func aLoopbackHostIsNeverConnected(host: String) async throws {
            let listener = try CountingListener()
            defer { listener.stop() }
            try await withClient(try configuration(host: host, port: listener.port, onlyGlobal: true)) { client in
                let error = try await expectFailure(client, HTTP2Request(path: "/x"))
                #expect(error.code == .addressNotAllowed)
                #expect(error.message.hasPrefix("\(host) resolves only to addresses that are not public: "), "\(error.message)")
                #expect(error.message.contains("127.0.0.1 (a loopback address)"), "\(error.message)")
                #expect(error.requestWasNotProcessed)
                #expect(client.statistics.connectionsOpened == 0)
            }
            #expect(listener.accepted == 0)
        }

        /// The same client without the rule does reach the listener: the count above could fail.
        @Test func withoutTheRuleTheListenerIsReached() async throws {
            let listener = try CountingListener()
            defer { listener.stop() }
            try await withClient(try configuration(host: "localhost", port: listener.port, onlyGlobal: false)) { client in
                let error = try await expectFailure(client, HTTP2Request(path: "/x"))
                #expect(error.code != .addressNotAllowed)
            }
            try await waitUntil { listener.accepted >= 1 }
        }
    }
}
