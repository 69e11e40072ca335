import Foundation
import Testing
import WebPush
import Worker
@testable import WorkerConfigurationFile

/// `platform: webpush` apps: the VAPID section, loaded and checked, and the settings that are
/// another platform's refused by name.
@Suite struct WebPushAppTests {
    static let pair = try! VAPIDKey.generateBase64URLPair()

    func load(_ text: String, environment: [String: String] = ["VAPID_KEY": WebPushAppTests.pair.privateKey]) throws(ConfigurationProblems) -> LoadedConfiguration {
        try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "pushworker.yaml"), environment: environment)
    }

    func findings(_ text: String, environment: [String: String] = ["VAPID_KEY": WebPushAppTests.pair.privateKey]) -> [ConfigurationFinding] {
        do {
            _ = try load(text, environment: environment)
            return []
        } catch {
            return error.findings
        }
    }

    @Test func aWebPushAppWithEverySetting() throws {
        let loaded = try load("""
            apps:
              - name: web
                platform: webpush
                vapid:
                  private_key: {env: VAPID_KEY}
                  public_key: \(Self.pair.publicKey)
                  subject: mailto:push@example.com
                max_origins: 8
                max_connections: 3
                max_streams: 50
                request_timeout: 20s
                prune_invalid_tokens: true
            """)
        let web = try #require(loaded.worker.webPushApps["web"])
        #expect(web.vapidKey.publicKeyBase64URL == Self.pair.publicKey)
        #expect(web.subject.value == "mailto:push@example.com")
        #expect(web.maxOrigins == 8)
        #expect(web.maxConnectionsPerOrigin == 3)
        #expect(web.maxStreamsPerConnection == 50)
        #expect(web.requestTimeout == .seconds(20))
        #expect(web.pruneInvalidTokens)
        #expect(loaded.worker.apnsApps.isEmpty, "a Web Push app only")
        #expect(loaded.worker.appNames == ["web"])
        let text = EffectiveConfigurationText.render(loaded)
        #expect(!text.contains(Self.pair.privateKey), "the private key is never printed")
        #expect(text.contains("private_key: {env: VAPID_KEY}  # ***"))
        #expect(throws: Never.self) { try ConfigurationFileReader.parse(text, path: "printed.yaml") }
    }

    @Test func theVAPIDSectionIsRequiredAndComplete() {
        let missing = findings("""
            apps:
              - name: web
                platform: webpush
            """)
        #expect(missing.contains { $0.field == "apps[0].vapid" && $0.message.contains("pushworker webpush keys") })
        let incomplete = findings("""
            apps:
              - name: web
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}}
            """)
        #expect(incomplete.contains { $0.field == "apps[0].vapid.subject" && $0.message.contains("missing") })
    }

    @Test(arguments: [
        ("subject: mailto:<push@example.com>", "apps[0].vapid.subject", "angle brackets"),
        ("subject: https://localhost/contact", "apps[0].vapid.subject", "localhost"),
        ("subject: push@example.com", "apps[0].vapid.subject", "mailto: or https:"),
        ("subject: mailto:a@example.com\n      public_key: BAAA", "apps[0].vapid.public_key", "does not belong"),
    ])
    func aBadSubjectOrMismatchedPublicKeyIsNamed(_ line: String, _ field: String, _ words: String) {
        let found = findings("""
            apps:
              - name: web
                platform: webpush
                vapid:
                  private_key: {env: VAPID_KEY}
                  \(line)
            """)
        #expect(found.contains { $0.field == field && $0.message.contains(words) }, "\(found)")
    }

    @Test func aKeyThatIsNoVAPIDKey() {
        let found = findings("""
            apps:
              - name: web
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
            """, environment: ["VAPID_KEY": "not-a-key"])
        #expect(found.contains { $0.field == "apps[0].vapid.private_key" && $0.message.contains("pushworker webpush keys") })
        let unset = findings("""
            apps:
              - name: web
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
            """, environment: [:])
        #expect(unset.contains { $0.field == "apps[0].vapid.private_key" && $0.message.contains("VAPID_KEY is not set") })
    }

    @Test func anotherPlatformsSettingsAreRefusedByName() {
        let found = findings("""
            apps:
              - name: web
                platform: webpush
                topic: com.example.app
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
              - name: ios
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
                max_origins: 3
                pkcs12: {file: x.p12}
            """)
        #expect(found.contains { $0.field == "apps[0].topic" && $0.message == "is a setting of apns apps; this app's platform is webpush" })
        #expect(found.contains { $0.field == "apps[1].vapid" && $0.message == "is a setting of webpush apps; this app's platform is apns" })
        #expect(found.contains { $0.field == "apps[1].max_origins" && $0.message.contains("webpush apps") })
    }
    /// The push services whose refusals may pause the app: the four browsers' services unless the
    /// file names others (an on-premises service), or none; `config check` prints them.
    @Test func trustedPushServicesAreTheBrowsersUnlessTheFileNamesOthers() throws {
        let loaded = try load("""
            apps:
              - name: web
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
              - name: corp
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
                trusted_push_services: [push.corp.example:8443, "*.notify.windows.com"]
              - name: none
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
                trusted_push_services: []
            """)
        #expect(loaded.worker.webPushApps["web"]?.trustedPushServices == WebPushServiceName.wellKnown)
        #expect(loaded.worker.webPushApps["corp"]?.trustedPushServices.map(\.description) == ["push.corp.example:8443", "*.notify.windows.com"])
        #expect(loaded.worker.webPushApps["none"]?.trustedPushServices.isEmpty == true)
        let text = EffectiveConfigurationText.render(loaded)
        #expect(text.contains(#"    trusted_push_services: ["push.corp.example:8443", "*.notify.windows.com"]"#), "\(text)")
        let reread = try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "printed.yaml"),
                                                  environment: ["VAPID_KEY": Self.pair.privateKey])
        #expect(reread.worker.webPushApps["corp"]?.trustedPushServices == loaded.worker.webPushApps["corp"]?.trustedPushServices)
        let found = findings("""
            apps:
              - name: web
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
                trusted_push_services: [fcm.googleapis.com, "push example"]
            """)
        #expect(found.contains { $0.field == "apps[0].trusted_push_services[1]" && $0.message.contains("expected a host name") }, "\(found)")
    }

    /// Public endpoints on port 443 unless the app says otherwise; `config check` prints both.
    @Test func endpointsArePublicOn443UnlessTheAppOptsIn() throws {
        let loaded = try load("""
            apps:
              - name: web
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
              - name: local
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
                allow_private_endpoints: true
                allowed_endpoint_ports: [8443, 443]
              - name: anywhere
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
                allowed_endpoint_ports: any
            """)
        let web = try #require(loaded.worker.webPushApps["web"])
        #expect(!web.allowPrivateEndpoints)
        #expect(web.allowedEndpointPorts == [443])
        let local = try #require(loaded.worker.webPushApps["local"])
        #expect(local.allowPrivateEndpoints)
        #expect(local.allowedEndpointPorts == [443, 8443])
        #expect(loaded.worker.webPushApps["anywhere"]?.allowedEndpointPorts == nil)
        let text = EffectiveConfigurationText.render(loaded)
        #expect(text.contains("    allow_private_endpoints: false\n    allowed_endpoint_ports: [443]\n"))
        #expect(text.contains("    allow_private_endpoints: true\n    allowed_endpoint_ports: [443, 8443]\n"))
        #expect(text.contains("    allowed_endpoint_ports: any\n"))
        let reread = try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "printed.yaml"),
                                                  environment: ["VAPID_KEY": Self.pair.privateKey])
        #expect(reread.worker.webPushApps["local"]?.allowedEndpointPorts == [443, 8443], "the printed text reads back the same")
    }

    @Test(arguments: [
        ("allowed_endpoint_ports: []", "apps[0].allowed_endpoint_ports", "the list is empty"),
        ("allowed_endpoint_ports: all", "apps[0].allowed_endpoint_ports", "expected a list of ports such as [443, 8443], or any, got \"all\""),
        ("allowed_endpoint_ports: {443: yes}", "apps[0].allowed_endpoint_ports", "expected a list of ports"),
        ("allowed_endpoint_ports: [443, 70000]", "apps[0].allowed_endpoint_ports[1]", "must be 1…65535, got 70000"),
        ("allowed_endpoint_ports: [443, https]", "apps[0].allowed_endpoint_ports[1]", "expected a whole number, got \"https\""),
        ("allowed_endpoint_ports: [443, ~]", "apps[0].allowed_endpoint_ports[1]", "expected a port"),
        ("allow_private_endpoints: maybe", "apps[0].allow_private_endpoints", "expected true or false"),
    ])
    func aBadEndpointSettingIsNamed(_ line: String, _ field: String, _ words: String) {
        let found = findings("""
            apps:
              - name: web
                platform: webpush
                vapid: {private_key: {env: VAPID_KEY}, subject: "mailto:a@example.com"}
                \(line)
            """)
        #expect(found.contains { $0.field == field && $0.message.contains(words) }, "\(found)")
    }

    @Test func endpointSettingsBelongToWebPushApps() {
        let found = findings("""
            apps:
              - name: ios
                pkcs12: {file: x.p12}
                allow_private_endpoints: true
                allowed_endpoint_ports: [443]
            """)
        #expect(found.contains { $0.field == "apps[0].allow_private_endpoints" && $0.message.contains("webpush apps") })
        #expect(found.contains { $0.field == "apps[0].allowed_endpoint_ports" && $0.message.contains("webpush apps") })
    }
}

