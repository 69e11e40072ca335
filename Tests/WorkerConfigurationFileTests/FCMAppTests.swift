import FCM
import Foundation
import Testing
import Worker
@testable import WorkerConfigurationFile

/// `platform: fcm` apps: the service account, read and checked when the file is loaded, with
/// problems named by field and line.
@Suite struct FCMAppTests {
    /// A service-account key file as Google's console writes it, with a fresh RSA key.
    static func serviceAccountFile(in directory: URL, projectID: String = "my-project") throws -> String {
        let key = directory.appendingPathComponent("key.pem").path
        let made = Process()
        made.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        made.arguments = ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key]
        made.standardError = FileHandle.nullDevice
        try made.run()
        made.waitUntilExit()
        let pem = try String(contentsOfFile: key, encoding: .utf8)
        let json: [String: String] = [
            "type": "service_account", "project_id": projectID, "private_key_id": "abc123", "private_key": pem,
            "client_email": "pushworker@\(projectID).iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        let path = directory.appendingPathComponent("service-account.json").path
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func findings(_ text: String, environment: [String: String] = [:]) -> [ConfigurationFinding] {
        do {
            _ = try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "pushworker.yaml"), environment: environment)
            return []
        } catch {
            return error.findings
        }
    }

    @Test func anFCMAppWithItsServiceAccount() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.serviceAccountFile(in: directory)
        let loaded = try ConfigurationLoader.load(try ConfigurationFileReader.parse("""
            apps:
              - name: android
                platform: fcm
                service_account: {file: \(file)}
                max_connections: 6
                request_timeout: 20s
                prune_invalid_tokens: true
            """, path: "pushworker.yaml"), environment: [:])
        let android = try #require(loaded.worker.fcmApps["android"])
        #expect(android.serviceAccount.projectID == "my-project")
        #expect(android.maxConnections == 6)
        #expect(android.maxStreamsPerConnection == 100)
        #expect(android.requestTimeout == .seconds(20))
        #expect(android.pruneInvalidTokens)
        #expect(loaded.worker.appNames == ["android"])
        let text = EffectiveConfigurationText.render(loaded)
        #expect(text.contains("service_account: {file: \"\(file)\"}  # ***"))
        #expect(!text.contains("PRIVATE KEY"))
        #expect(throws: Never.self) { try ConfigurationFileReader.parse(text, path: "printed.yaml") }
    }

    @Test func aBadServiceAccountIsAClearErrorAtStart() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("broken.json").path
        try Data(#"{"type":"authorized_user","project_id":"p"}"#.utf8).write(to: URL(fileURLWithPath: broken))
        let found = findings("""
            apps:
              - name: android
                platform: fcm
                service_account: {file: \(broken)}
            """)
        let finding = try #require(found.first { $0.field == "apps[0].service_account" })
        #expect(finding.line == 4)
        #expect(finding.message.contains("not a usable service-account key file"))
        #expect(finding.message.contains("type"), "names the member at fault: \(finding.message)")

        let missing = findings("""
            apps:
              - name: android
                platform: fcm
                service_account: {env: FCM_KEY}
            """)
        #expect(missing.contains { $0.field == "apps[0].service_account" && $0.message.contains("FCM_KEY is not set") })
        let absent = findings("""
            apps:
              - name: android
                platform: fcm
            """)
        #expect(absent.contains { $0.field == "apps[0].service_account" && $0.message.contains("missing") })
    }

    @Test func aRequestTimeoutUnder15SecondsIsRefused() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.serviceAccountFile(in: directory)
        let found = findings("""
            apps:
              - name: android
                platform: fcm
                service_account: {file: \(file)}
                request_timeout: 5s
                url: https://127.0.0.1:2198/path
            """)
        #expect(found.contains { $0.field == "apps[0].request_timeout" && $0.message.contains("at least 15 s") })
    }

    @Test func anotherPlatformsSettingsAreRefused() {
        let found = findings("""
            apps:
              - name: android
                platform: fcm
                service_account: {env: FCM_KEY}
                topic: com.example.app
                vapid: {private_key: {env: X}, subject: "mailto:a@example.com"}
            """, environment: ["FCM_KEY": "{}"])
        #expect(found.contains { $0.field == "apps[0].topic" && $0.message == "is a setting of apns apps; this app's platform is fcm" })
        #expect(found.contains { $0.field == "apps[0].vapid" && $0.message == "is a setting of webpush apps; this app's platform is fcm" })
    }
}
