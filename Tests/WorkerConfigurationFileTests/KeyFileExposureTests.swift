import Foundation
import Testing
@testable import WorkerConfigurationFile

/// Key files others can read are warned about, as ssh refuses such private keys: the mode check as
/// a pure function, then each kind of key file as the loader finds it.
@Suite struct KeyFileExposureTests {
    @Test(arguments: [0o600, 0o400, 0o700, 0o100600, 0o200])
    func onlyTheOwnerHasAccess(mode: Int) {
        #expect(KeyFileExposure.warning(app: "news", file: "/k/AuthKey.p8", mode: UInt32(mode)) == nil)
    }

    @Test func readableByGroupAndOthersNamesAppFileModeAndFix() throws {
        let warning = try #require(KeyFileExposure.warning(app: "news", file: "/k/AuthKey.p8", mode: 0o100644))
        #expect(warning == "the key file /k/AuthKey.p8 of app \"news\" has mode 0644: its group and other users can read it. Run chmod 600 /k/AuthKey.p8 so that only the worker's user can (ssh refuses a private key like this)")
    }

    @Test(arguments: [
        (0o640, "has mode 0640: its group can read it"),
        (0o604, "has mode 0604: other users can read it"),
        (0o620, "has mode 0620: its group has access to it"),
        (0o666, "has mode 0666: its group and other users can read it"),
        (0o001, "has mode 0001: other users have access to it"),
    ])
    func eachKindOfAccessIsSaid(mode: Int, text: String) throws {
        let warning = try #require(KeyFileExposure.warning(app: "web", file: "/k/vapid.key", mode: UInt32(mode)))
        #expect(warning.contains(text), "\(warning)")
        #expect(warning.contains("chmod 600 /k/vapid.key"))
    }

    /// Every key file kind, from a file: the .p8, the certificate's key (or the certificate holding
    /// it), the PKCS#12, the VAPID key and the service account; keys from the environment have no mode.
    @Test func theLoaderWarnsForEachKeyFileOthersCanRead() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let key = try material.tokenKey("open.p8", mode: 0o644)
        let (certificate, certificateKey) = try material.certificate()
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: certificateKey)
        let vapid = try material.writeKey("vapid.key", "whatever", mode: 0o604)
        let text = """
            apps:
            \(ConfigurationFileTests.tokenApp(keyFile: key))
              - name: shop
                certificate:
                  cert_file: \(certificate)
                  key_file: \(certificateKey)
            """
        let file = try ConfigurationFileReader.parse(text, path: "pushworker.yaml")
        let loaded = try ConfigurationLoader.load(file, environment: [:])
        #expect(loaded.exposedKeyFiles.map(\.field) == ["apps[0].token.key_file", "apps[1].certificate.key_file"])
        #expect(loaded.exposedKeyFiles.allSatisfy { $0.severity == .warning })
        #expect(loaded.warnings == loaded.exposedKeyFiles)
        #expect(loaded.exposedKeyFiles.first?.line == 7)
        #expect(loaded.exposedKeyFiles.first?.description.hasPrefix("pushworker.yaml:7: warning: apps[0].token.key_file: the key file \(key) of app \"news\" has mode 0644") == true)

        let modes = [key: UInt32(0o644), certificate: 0o644, "/k/app.p12": 0o644, vapid: 0o604, "/k/sa.json": 0o640]
        func fields(_ credentials: AppEntry.Credentials) -> [String] {
            KeyFileExposure.findings(for: AppEntry(name: "a", credentials: credentials, field: "apps[0]"), file: "f.yaml") { modes[$0] }.map(\.field)
        }
        #expect(fields(.certificate(certificateFile: certificate, keyFile: nil, password: nil)) == ["apps[0].certificate.cert_file"])
        #expect(fields(.pkcs12(file: "/k/app.p12", password: .file(key))) == ["apps[0].pkcs12.file"])
        #expect(fields(.vapid(privateKey: .file(vapid), subject: "mailto:a@example.com", publicKey: nil)) == ["apps[0].vapid.private_key"])
        #expect(fields(.serviceAccount(.file("/k/sa.json"))) == ["apps[0].service_account"])
        #expect(fields(.serviceAccount(.environment("SA", base64: false))) == [])
        #expect(fields(.token(key: .environment("P8", base64: true), keyID: "ABCDE12345", teamID: "TEAM123456")) == [])
    }
}
