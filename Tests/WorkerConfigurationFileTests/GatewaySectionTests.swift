import Testing
@testable import WorkerConfigurationFile

/// The file's gateway: section: read as written, every mistake named with its line.
@Suite struct GatewaySectionTests {
    static let apps = """
        apps:
          - name: news
            platform: apns
            topic: com.example.news
            token: {key_file: /k.p8, key_id: ABCDE12345, team_id: TEAM123456}
          - name: web
            platform: webpush
            vapid: {private_key: {env: V}, subject: "mailto:a@example.com"}
        """

    func findings(_ gateway: String) -> [ConfigurationFinding] {
        do {
            _ = try ConfigurationFileReader.parse(Self.apps + "\n" + gateway, path: "p.yaml")
            return []
        } catch {
            return error.findings
        }
    }

    @Test func readsTheSectionAndLoadsTheKeys() throws {
        let file = try ConfigurationFileReader.parse(Self.apps + """

            gateway:
              listen: 0.0.0.0:8080
              max_body_bytes: 65536
              relay: false
              relay_apps: {development: news, production: news}
              pushd_udp: 127.0.0.1:7734,7874
              pushd_app: news
              api_keys:
                - {name: shop, key: {env: SHOP_KEY}, apps: [news, web], requests_per_second: 50, burst: 80}
                - {name: ops, key: {env: OPS_KEY}, apps: "*"}
            """, path: "p.yaml")
        let section = try #require(file.gateway)
        #expect(section.listen == "0.0.0.0:8080" && section.maxBodyBytes == 65536 && section.relay == false)
        #expect(section.relayDevelopmentApp == "news" && section.pushdUDP == "127.0.0.1:7734,7874" && section.pushdApp == "news")
        #expect(section.apiKeys.map(\.name) == ["shop", "ops"])
        #expect(section.apiKeys[0].apps == ["news", "web"] && section.apiKeys[1].apps == nil)
        #expect(section.apiKeys[0].requestsPerSecond == 50 && section.apiKeys[0].burst == 80)
        let secret = String(repeating: "k", count: 32)
        let keys = try section.loadKeys(path: file.path, lines: file.lines, environment: ["SHOP_KEY": secret, "OPS_KEY": secret + "x"])
        #expect(keys.map(\.secret) == [secret, secret + "x"])
    }

    @Test func aShortOrMissingSecretIsRefusedByField() throws {
        let file = try ConfigurationFileReader.parse(Self.apps + """

            gateway:
              api_keys:
                - {name: shop, key: {env: SHOP_KEY}, apps: [news]}
                - {name: ops, key: {env: OPS_KEY}, apps: [news]}
            """, path: "p.yaml")
        let section = try #require(file.gateway)
        #expect(throws: ConfigurationProblems.self) {
            try section.loadKeys(path: file.path, lines: file.lines, environment: ["SHOP_KEY": "short"])
        }
        do {
            _ = try section.loadKeys(path: file.path, lines: file.lines, environment: ["SHOP_KEY": "short"])
        } catch {
            #expect(error.findings.map(\.field) == ["gateway.api_keys[0].key", "gateway.api_keys[1].key"])
            #expect(error.findings[0].message.contains("use at least 32"))
            #expect(error.findings[1].message.contains("OPS_KEY is not set"))
        }
    }

    @Test func mistakesAreNamedWithTheirField() {
        let found = findings("""
            gateway:
              lisen: 127.0.0.1:8080
              relay_apps: {development: web, production: nope}
              pushd_app: web
              api_keys:
                - {name: shop, key: "written-in-the-file", apps: [news]}
                - {name: ops, key: {env: K}, apps: [news, missing]}
                - {name: ops, key: {env: K2}, apps: "*"}
                - {name: none, key: {env: K3}}
            """)
        let messages = Dictionary(found.map { ($0.field, $0.message) }, uniquingKeysWith: { $0 + " | " + $1 })
        #expect(messages["gateway.lisen"]?.contains("did you mean listen?") == true)
        #expect(messages["gateway.relay_apps.development"]?.contains("is a webpush app") == true)
        #expect(messages["gateway.relay_apps.production"]?.contains("\"nope\" is not in apps:") == true)
        #expect(messages["gateway.pushd_app"]?.contains("is a webpush app") == true)
        #expect(messages["gateway.api_keys[0].key"]?.contains("not in the file itself") == true)
        #expect(messages["gateway.api_keys[1].apps"]?.contains("\"missing\" is not in apps:") == true)
        #expect(messages["gateway.api_keys[2].name"]?.contains("named twice") == true)
        #expect(messages["gateway.api_keys[3].apps"]?.contains("missing") == true)
        #expect(found.allSatisfy { $0.line != nil })
    }

    @Test func readsTheRelayLimitsAndTrustedProxies() throws {
        let file = try ConfigurationFileReader.parse(Self.apps + """

            gateway:
              relay_limits:
                per_address: {requests_per_second: 20, burst: 400}
                per_app: {requests_per_second: 2000}
                max_addresses: 50000
              trusted_proxies: [10.0.0.0/8, "::1", 192.0.2.7]
            """, path: "p.yaml")
        let section = try #require(file.gateway)
        #expect(section.relayPerAddress == GatewaySection.Rate(requestsPerSecond: 20, burst: 400))
        #expect(section.relayPerApp == GatewaySection.Rate(requestsPerSecond: 2000, burst: nil))
        #expect(section.relayMaxAddresses == 50000)
        #expect(section.trustedProxies?.map(\.description) == ["10.0.0.0/8", "::1/128", "192.0.2.7/32"])
    }

    @Test func relayLimitMistakesAreNamedWithTheirField() {
        let found = findings("""
            gateway:
              relay_limits:
                per_address: {requests_per_second: 0, bursts: 10}
                per_app: 500
                max_addresses: 10
              trusted_proxies: [10.0.0.0/33, nginx.internal]
            """)
        let messages = Dictionary(found.map { ($0.field, $0.message) }, uniquingKeysWith: { $0 + " | " + $1 })
        #expect(messages["gateway.relay_limits.per_address.requests_per_second"] == "must be 1…1000000, got 0")
        #expect(messages["gateway.relay_limits.per_address.bursts"]?.contains("did you mean burst?") == true)
        #expect(messages["gateway.relay_limits.per_app"]?.contains("expected a mapping") == true)
        #expect(messages["gateway.relay_limits.max_addresses"] == "must be 100…10000000, got 10")
        #expect(messages["gateway.trusted_proxies[0]"]?.contains("\"10.0.0.0/33\" is not an IP address or CIDR block") == true)
        #expect(messages["gateway.trusted_proxies[1]"]?.contains("\"nginx.internal\" is not an IP address") == true)
        #expect(found.allSatisfy { $0.line != nil })
    }
}
