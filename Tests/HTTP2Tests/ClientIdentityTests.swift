import HTTP2
import Testing

extension IntegrationSuite {
    /// Client certificates (APNs certificate auth) against a server that requires one.
    @Suite struct ClientIdentity {
        static func subjectSeenByServer(_ identity: TLSClientIdentity?) async throws -> String {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startH2Server(pki, ["--client-ca", pki.caCertificate])
            defer { server.stop() }
            var configuration = pki.configuration(port: port)
            configuration.identity = identity
            return try await withClient(configuration) { client in
                let response = try await client.send(HTTP2Request(path: "/whoami"))
                #expect(response.status == 200)
                return response.header("x-client-subject") ?? ""
            }
        }

        @Test func pemCertificateWithEncryptedKey() async throws {
            let pki = try TestPKI.get()
            let subject = try await Self.subjectSeenByServer(.pem(
                certificateFile: pki.clientCertificate, privateKeyFile: pki.clientKeyEncrypted,
                password: TestPKI.clientKeyPassword))
            #expect(subject == "commonName=\(TestPKI.clientCommonName)")
        }

        @Test(arguments: [false, true]) func pkcs12(legacyEncryption: Bool) async throws {
            let pki = try TestPKI.get()
            let subject = try await Self.subjectSeenByServer(.pkcs12(
                file: legacyEncryption ? pki.clientLegacyPKCS12 : pki.clientPKCS12, password: TestPKI.clientKeyPassword))
            #expect(subject == "commonName=\(TestPKI.clientCommonName)")
        }

        /// OpenSSL's default would prompt for the passphrase on the terminal (a service hangs there);
        /// the worker refuses the key and says why.
        @Test func anEncryptedKeyWithoutPasswordIsRefusedWithoutAPrompt() async throws {
            let pki = try TestPKI.get()
            var configuration = pki.configuration(port: try Network.freePort())
            configuration.identity = .pem(certificateFile: pki.clientCertificate, privateKeyFile: pki.clientKeyEncrypted, password: nil)
            let error = try await withClient(configuration) { client in
                try await expectFailure(client, HTTP2Request(path: "/"))
            }
            #expect(error.code == .tlsFailed)
            #expect(error.message.contains("\(pki.clientKeyEncrypted) is encrypted and no password was given"))
        }

        @Test func wrongPKCS12PasswordFailsWithTLSFailed() async throws {
            let pki = try TestPKI.get()
            var configuration = pki.configuration(port: try Network.freePort())
            configuration.identity = .pkcs12(file: pki.clientPKCS12, password: "wrong")
            let error = try await withClient(configuration) { client in
                try await expectFailure(client, HTTP2Request(path: "/"))
            }
            #expect(error.code == .tlsFailed)
            #expect(error.message.contains("PKCS#12"))
        }
    }
}
