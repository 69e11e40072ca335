import Foundation
@testable import HTTP2
import Testing

/// HTTP/2 forbids TLS renegotiation (RFC 9113 §9.2.1): the client refuses a server's HelloRequest.
@Suite struct TLSContextOptions {
    @Test func renegotiationIsDisabledOnTheClientContext() throws {
        let context = try TLSContext(configuration: HTTP2ClientConfiguration(host: "localhost", port: 443))
        #expect(context.options & TLSContext.noRenegotiationOption != 0)
    }
}

extension IntegrationSuite {
    @Suite struct TLSRenegotiation {
        /// `openssl s_server` over TLS 1.2 (1.3 has no renegotiation) asks for a renegotiation when
        /// it reads "r" on its standard input. The client answers with a no_renegotiation alert,
        /// which s_server treats as fatal, so the request in flight fails with `.connectionLost`.
        /// A client that renegotiated would keep the connection and the request would time out.
        @Test func serverRequestedRenegotiationEndsTheConnection() async throws {
            let pki = try TestPKI.get()
            let port = try Network.freePort()
            let server = try ChildProcess(TestPKI.openssl, [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", pki.serverCertificate, "-key", pki.serverKey,
                "-tls1_2", "-alpn", "h2",
            ], keepsInputOpen: true)
            defer { server.stop() }
            try await Network.waitUntilListening(port: port, process: server)
            try await withClient(pki.configuration(port: port)) { client in
                let outcome = OutcomeBox()
                // s_server does not speak HTTP/2: the request stays in flight until something ends it.
                client.send(HTTP2Request(path: "/")) { outcome.set($0) }
                try await waitUntil { client.statistics.streamsInFlight == 1 }
                _ = try await server.line(containing: "Secure Renegotiation IS supported")
                try server.send("r\n")
                try await waitUntil { outcome.error != nil }
                #expect(outcome.error?.code == .connectionLost)
                // The server ended it because the client refused, not for another reason.
                _ = try await server.line(containing: "no renegotiation")
                try await waitUntil { client.statistics.openConnections == 0 }
            }
        }
    }
}
