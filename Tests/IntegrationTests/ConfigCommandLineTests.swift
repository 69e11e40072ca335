import Foundation
import Testing

/// `pushworker config check` and `run --config` as a person runs them.
@Suite struct ConfigCommandLineTests {
    static func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "pushworker-\(UUID().uuidString.prefix(8)).yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func app(key: String, keyID: String = "ABC123DEFG") -> String {
        """
        amqp:
          url: amqp://guest:filepassword@127.0.0.1:1/
        worker:
          max_in_flight: 100
        apps:
          - name: news
            environment: development
            topic: com.example.news
            token:
              key_file: \(key)
              key_id: \(keyID)
              team_id: DEF123GHIJ
        """
    }

    @Test func checkPrintsTheEffectiveConfigurationWithFlagsOverTheFile() throws {
        let key = try CommandLineTests.tokenKey()
        let path = try Self.file(Self.app(key: key))
        defer { try? FileManager.default.removeItem(atPath: key); try? FileManager.default.removeItem(atPath: path) }
        let outcome = try CommandLineTests.run(["config", "check", path, "--chunk-size", "500"])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("max_in_flight: 100"))
        #expect(outcome.output.contains("chunk_size: 500"))
        #expect(outcome.output.contains("url: \"amqp://guest:***@127.0.0.1:1/\""))
        #expect(!outcome.output.contains("filepassword"))
        #expect(outcome.output.contains("key_id: ABC123DEFG"))
    }

    /// Options over variables over the file; PUSHWORKER_CONFIG names the file.
    @Test func variablesOverrideTheFileAndFlagsOverrideVariables() throws {
        let key = try CommandLineTests.tokenKey()
        let path = try Self.file(Self.app(key: key))
        defer { try? FileManager.default.removeItem(atPath: key); try? FileManager.default.removeItem(atPath: path) }
        let outcome = try CommandLineTests.run(["config", "check", "--chunk-size", "300"], environment: [
            "PUSHWORKER_CONFIG": path, "PUSHWORKER_MAX_IN_FLIGHT": "9", "PUSHWORKER_CHUNK_SIZE": "200",
        ])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("max_in_flight: 9"))
        #expect(outcome.output.contains("chunk_size: 300"))
    }

    @Test func checkNamesFileLineAndFieldAndFails() throws {
        let key = try CommandLineTests.tokenKey()
        let path = try Self.file(Self.app(key: key, keyID: "ABC"))
        defer { try? FileManager.default.removeItem(atPath: key); try? FileManager.default.removeItem(atPath: path) }
        let outcome = try CommandLineTests.run(["config", "check", path])
        #expect(outcome.status != 0)
        #expect(outcome.output.contains("\(path):11: apps[0].token.key_id: expected 10 characters, got \"ABC\""))
    }

    /// A service-account file that is not one (here a user's OAuth credentials, the usual mix-up)
    /// stops `run` before it connects anywhere, naming the file's line, the field and the member.
    @Test func aBadFCMServiceAccountDoesNotStart() throws {
        let account = NSTemporaryDirectory() + "pushworker-sa-\(UUID().uuidString.prefix(8)).json"
        try #"{"type":"authorized_user","client_id":"x.apps.googleusercontent.com","refresh_token":"r"}"#
            .write(toFile: account, atomically: true, encoding: .utf8)
        let path = try Self.file("""
            apps:
              - name: android
                platform: fcm
                service_account: {file: \(account)}
            """)
        defer { try? FileManager.default.removeItem(atPath: account); try? FileManager.default.removeItem(atPath: path) }
        let outcome = try CommandLineTests.run(["run", "--config", path])
        #expect(outcome.status != 0)
        #expect(outcome.output.contains("\(path):4: apps[0].service_account: not a usable service-account key file"), "\(outcome.output)")
        #expect(outcome.output.contains("type"), "names the member at fault: \(outcome.output)")
        #expect(!outcome.output.contains("refresh_token\":\"r"), "never echoes the file")
    }

    @Test func runWithAFileRefusesTheOneAppOptions() throws {
        let key = try CommandLineTests.tokenKey()
        let path = try Self.file(Self.app(key: key))
        defer { try? FileManager.default.removeItem(atPath: key); try? FileManager.default.removeItem(atPath: path) }
        let outcome = try CommandLineTests.run(["run", "--config", path, "--apns-topic", "com.example.other", "--app", "x"])
        #expect(outcome.status != 0)
        #expect(outcome.output.contains("remove --apns-topic (PUSHWORKER_APNS_TOPIC), --app (PUSHWORKER_APP)"))
    }

    /// A key file its group or other users can read: a warning naming the app, the file, its mode
    /// and the fix, in `config check` (which still passes) and in `run`'s log at start; none for 0600.
    @Test func aKeyFileOthersCanReadIsWarnedAbout() async throws {
        let key = try CommandLineTests.tokenKey()
        let path = try Self.file(Self.app(key: key))
        defer { try? FileManager.default.removeItem(atPath: key); try? FileManager.default.removeItem(atPath: path) }
        let warning = "\(path):10: warning: apps[0].token.key_file: the key file \(key) of app \"news\" has mode 0644: its group and other users can read it. Run chmod 600 \(key)"

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        let open = try CommandLineTests.run(["config", "check", path])
        #expect(open.status == 0, "\(open.output)")
        #expect(open.output.contains(warning), "\(open.output)")
        let worker = try WorkerProcess(arguments: ["run", "--config", path])
        defer { worker.terminate() }
        try await worker.waitForLog(warning)

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let closed = try CommandLineTests.run(["config", "check", path])
        #expect(closed.status == 0, "\(closed.output)")
        #expect(!closed.output.contains("warning"), "\(closed.output)")
    }

    /// A certificate ending within 30 days: said on stderr, and the check still passes.
    @Test func aCertificateEndingSoonIsAWarningAndExitsZero() throws {
        let directory = NSTemporaryDirectory() + "pushworker-soon-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                             "-keyout", "\(directory)/key.pem", "-out", "\(directory)/cert.pem", "-days", "10",
                             "-subj", "/UID=com.example.soon/CN=Apple Push Services: com.example.soon"]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        #expect(openssl.terminationStatus == 0)
        let path = try Self.file("""
            apps:
              - name: soon
                certificate:
                  cert_file: \(directory)/cert.pem
                  key_file: \(directory)/key.pem
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outcome = try CommandLineTests.run(["config", "check", path])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("\(path):4: warning: apps[0].certificate.cert_file: the certificate in \(directory)/cert.pem expires in 10 days"))
        #expect(outcome.output.contains("topic: \"com.example.soon\""))
    }
}
