import APNs
import Foundation
import Testing
import Worker
@testable import WorkerConfigurationFile

/// The file's reader and checks: each kind of mistake is reported with the file, line and field.
@Suite struct ConfigurationFileTests {
    static func tokenApp(name: String = "news", keyFile: String, keyID: String = "ABCDE12345", topic: String = "com.example.news") -> String {
        """
          - name: \(name)
            platform: apns
            environment: development
            topic: \(topic)
            token:
              key_file: \(keyFile)
              key_id: \(keyID)
              team_id: TEAM123456
        """
    }

    func problems(_ text: String, environment: [String: String] = [:], overrides: WorkerSettings = WorkerSettings()) -> [ConfigurationFinding] {
        do {
            let file = try ConfigurationFileReader.parse(text, path: "pushworker.yaml")
            _ = try ConfigurationLoader.load(file, overrides: overrides, environment: environment)
            return []
        } catch {
            return error.findings
        }
    }

    @Test func readsEveryWorkerSettingAndTwoApps() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let key = try material.tokenKey()
        let (certificate, certificateKey) = try material.certificate()
        let text = """
            amqp:
              url: amqp://user:secret@127.0.0.1:5672/
            redis:
              url: redis://127.0.0.1:6379/3
            worker:
              prefetch: 50
              max_in_flight: 2000
              chunk_size: 500
              retry_delays: [1s, 10s]
              group_key_prefix: "g:"
              max_message_bytes: 2_097_152
              max_bytes_in_flight: 8388608
              max_redeliveries: 3
              completion_events: failures
              shutdown_timeout: 10s
              credentials_retry_interval: 2m
              unknown_app_grace: 90s
              job_queue: my.jobs
              results_exchange: my.results
              status_port: 8080
              status_host: 0.0.0.0
              log_level: debug
            apps:
            \(Self.tokenApp(keyFile: key))
                max_connections: 2
                max_streams: 100
                notifications_per_second: 500
                ping_interval: 30s
                idle_timeout: 10m
                request_timeout: 5s
                connect_timeout: 3s
              - name: shop
                url: https://127.0.0.1:2197
                topic: com.example.cert
                certificate:
                  cert_file: \(certificate)
                  key_file: \(certificateKey)
            """
        let file = try ConfigurationFileReader.parse(text, path: "pushworker.yaml")
        let loaded = try ConfigurationLoader.load(file, environment: [:])
        let worker = loaded.worker
        #expect(worker.prefetch == 50 && !worker.tunesPrefetch)
        #expect(worker.maxInFlight == 2000)
        #expect(worker.chunkSize == 500)
        #expect(worker.retry.delays == [.seconds(1), .seconds(10)])
        #expect(worker.retry.jobQueue == "my.jobs")
        #expect(worker.groupKeyPrefix == "g:")
        #expect(worker.maxMessageBytes == 2_097_152)
        #expect(worker.maxBytesInFlight == 8_388_608)
        #expect(worker.maxRedeliveries == 3)
        #expect(worker.completionEvents == .failures)
        #expect(worker.shutdownTimeout == .seconds(10))
        #expect(worker.credentialsRetryInterval == .seconds(120))
        #expect(worker.unknownAppGrace == .seconds(90))
        #expect(worker.jobQueue == "my.jobs" && worker.deadQueue == "my.jobs.dead")
        #expect(worker.resultsExchange == "my.results")
        #expect(loaded.settings.effectiveStatusPort == 8080)
        #expect(loaded.settings.effectiveStatusHost == "0.0.0.0")
        #expect(loaded.settings.effectiveLogLevel == .debug)
        #expect(worker.apps.keys.sorted() == ["news", "shop"])
        let news = try #require(worker.apnsApps["news"])
        #expect(news.environment == .development)
        #expect(news.topic == "com.example.news")
        #expect(news.maxConnections == 2)
        #expect(news.maxStreamsPerConnection == 100)
        #expect(news.maxNotificationsPerSecondPerConnection == 500)
        #expect(news.idlePingInterval == .seconds(30))
        #expect(news.idleConnectionTimeout == .seconds(600))
        #expect(news.requestTimeout == .seconds(5))
        #expect(news.connectTimeout == .seconds(3))
        guard case .token = news.credentials else { Issue.record("news should use token auth"); return }
        let shop = try #require(worker.apnsApps["shop"])
        #expect(shop.url == "https://127.0.0.1:2197")
        guard case .certificate = shop.credentials else { Issue.record("shop should use certificate auth"); return }
        #expect(loaded.certificates.map(\.app) == ["shop"])
        #expect(loaded.warnings.isEmpty)
    }

    @Test func defaultsComeFromWorkerConfigurationAndFlagsOverrideTheFile() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let text = """
            worker:
              max_in_flight: 100
              job_queue: from.file
            apps:
            \(Self.tokenApp(keyFile: try material.tokenKey()))
            """
        var overrides = WorkerSettings()
        overrides.maxInFlight = 7
        let loaded = try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "p.yaml"), overrides: overrides, environment: [:])
        let defaults = WorkerConfiguration(amqp: .init(url: "amqp://x"), redis: try .init(url: "redis://x"), apps: [:])
        #expect(loaded.worker.maxInFlight == 7)
        #expect(loaded.worker.jobQueue == "from.file")
        #expect(loaded.worker.chunkSize == defaults.chunkSize)
        #expect(loaded.worker.tunesPrefetch)
        #expect(loaded.worker.retry.delays == defaults.retry.delays)
        #expect(loaded.worker.unknownAppGrace == .seconds(300) && defaults.unknownAppGrace == .seconds(300))
        #expect(loaded.worker.amqp.url == WorkerSettings.defaultAMQPURL)
        let apns = try #require(loaded.worker.apnsApps["news"])
        #expect(apns.maxConnections == 4 && apns.requestTimeout == .seconds(30))
    }

    /// The grace may be 0 (rejected at once), never negative or past a day: each refusal names the field.
    @Test func unknownAppGraceIsZeroToADay() {
        let app = Self.tokenApp(keyFile: "/nonexistent.p8")
        let negative = problems("worker:\n  unknown_app_grace: -1s\napps:\n\(app)")
        #expect(negative.contains { $0.field == "worker.unknown_app_grace" && $0.line == 2 }, "\(negative)")
        var overrides = WorkerSettings()
        overrides.unknownAppGrace = .seconds(86_401)
        let long = problems("apps:\n\(app)", overrides: overrides)
        #expect(long.contains { $0.field == "worker.unknown_app_grace" && $0.message.contains("0…24h") }, "\(long)")
        overrides.unknownAppGrace = .zero
        #expect(!problems("apps:\n\(app)", overrides: overrides).contains { $0.field == "worker.unknown_app_grace" })
    }

    @Test func unknownKeySuggestsTheNearestOne() {
        let findings = problems("""
            worker:
              max_inflight: 10
            apps: []
            """)
        let finding = findings.first { $0.field == "worker.max_inflight" }
        #expect(finding?.line == 2)
        #expect(finding?.message.contains("did you mean max_in_flight?") == true)
        #expect(finding?.description.hasPrefix("pushworker.yaml:2: worker.max_inflight: unknown key") == true)
    }

    @Test func wrongTypeNamesTheFieldAndLine() {
        let findings = problems("""
            worker:
              chunk_size: lots
              shutdown_timeout: [1]
            apps: []
            """)
        #expect(findings.contains { $0.field == "worker.chunk_size" && $0.line == 2 && $0.message.contains("expected a whole number, got \"lots\"") })
        #expect(findings.contains { $0.field == "worker.shutdown_timeout" && $0.line == 3 })
    }

    @Test func yamlSyntaxErrorHasALine() {
        let findings = problems("apps:\n  - name: [unclosed\n")
        #expect(findings.count == 1)
        #expect(findings.first?.line != nil)
        #expect(findings.first?.field == "yaml")
    }

    @Test func keyIDOfWrongLengthIsReportedAsInTheExample() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let key = try material.tokenKey()
        let text = "apps:\n" + Self.tokenApp(name: "one", keyFile: key) + "\n" + Self.tokenApp(name: "two", keyFile: key, keyID: "ABC")
        let findings = problems(text)
        #expect(findings.map(\.description) == ["pushworker.yaml:16: apps[1].token.key_id: expected 10 characters, got \"ABC\""])
    }

    @Test func missingKeyFile() {
        let findings = problems("apps:\n" + Self.tokenApp(keyFile: "/nonexistent/AuthKey.p8"))
        #expect(findings.count == 1)
        #expect(findings.first?.field == "apps[0].token.key_file")
        #expect(findings.first?.line == 7)
        #expect(findings.first?.message == "cannot read /nonexistent/AuthKey.p8")
    }

    @Test func keyInTheWrongFormat() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let notAKey = try material.writeKey("AuthKey.p8", "this is not a key\n")
        let findings = problems("apps:\n" + Self.tokenApp(keyFile: notAKey))
        #expect(findings.count == 1)
        #expect(findings.first?.field == "apps[0].token.key_file")
        #expect(findings.first?.message.hasPrefix("not a usable .p8 key") == true)
    }

    @Test func keyFromTheEnvironmentAsTextOrBase64() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let pem = try String(contentsOfFile: try material.tokenKey(), encoding: .utf8)
        func app(_ key: String) -> String {
            """
            apps:
              - name: news
                topic: com.example.news
                token:
                  key: \(key)
                  key_id: ABCDE12345
                  team_id: TEAM123456
            """
        }
        let environment = ["KEY_P8": pem, "KEY_P8_BASE64": Data(pem.utf8).base64EncodedString()]
        #expect(problems(app("{env: KEY_P8}"), environment: environment).isEmpty)
        #expect(problems(app("{env: KEY_P8_BASE64, base64: true}"), environment: environment).isEmpty)
        let unset = problems(app("{env: NOT_SET}"), environment: environment)
        #expect(unset.map(\.message) == ["the environment variable NOT_SET is not set"])
        // Written in the file itself, a secret is refused (and not echoed).
        let inline = problems(app("\"-----BEGIN PRIVATE KEY-----\""), environment: environment)
        #expect(inline.first?.field == "apps[0].token.key")
        #expect(inline.first?.message.contains("BEGIN") == false)
    }

    @Test func expiredCertificateIsAnError() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let (certificate, key) = try material.certificate(validUntil: Date().addingTimeInterval(-86_400))
        let findings = problems("""
            apps:
              - name: shop
                certificate:
                  cert_file: \(certificate)
                  key_file: \(key)
            """)
        #expect(findings.count == 1)
        #expect(findings.first?.severity == .error)
        #expect(findings.first?.field == "apps[0].certificate.cert_file")
        #expect(findings.first?.line == 4)
        #expect(findings.first?.message.contains("expired") == true)
    }

    @Test func certificateExpiringWithin30DaysIsAWarning() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let (certificate, key) = try material.certificate(validUntil: Date().addingTimeInterval(10 * 86_400 + 3600))
        let file = try ConfigurationFileReader.parse("""
            apps:
              - name: shop
                certificate:
                  cert_file: \(certificate)
                  key_file: \(key)
            """, path: "pushworker.yaml")
        let loaded = try ConfigurationLoader.load(file, environment: [:])
        #expect(loaded.worker.apnsApps["shop"]?.topic == "com.example.cert")
        #expect(loaded.warnings.count == 1)
        #expect(loaded.warnings.first?.severity == .warning)
        #expect(loaded.warnings.first?.message.contains("expires in 10 days") == true)
        #expect(loaded.certificates.first?.warning(now: Date()) != nil)
        #expect(loaded.certificates.first?.warning(now: Date().addingTimeInterval(-30 * 86_400)) == nil)
    }

    @Test func topicTheCertificateDoesNotCover() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let (certificate, key) = try material.certificate(bundleID: "com.example.cert")
        let findings = problems("""
            apps:
              - name: shop
                topic: com.example.other
                certificate:
                  cert_file: \(certificate)
                  key_file: \(key)
            """)
        #expect(findings.count == 1)
        #expect(findings.first?.field == "apps[0].topic")
        #expect(findings.first?.line == 3)
        #expect(findings.first?.message.contains("not among the certificate's topics (com.example.cert)") == true)
    }

    @Test func certificatePasswordFromAFileAndPKCS12Missing() {
        let findings = problems("""
            apps:
              - name: shop
                pkcs12:
                  file: /nonexistent/shop.p12
                  password: {env: SHOP_P12_PASSWORD}
            """, environment: ["SHOP_P12_PASSWORD": "x"])
        #expect(findings.map(\.description) == ["pushworker.yaml:4: apps[0].pkcs12.file: cannot read /nonexistent/shop.p12"])
    }

    @Test func duplicateAndInvalidAppNames() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let key = try material.tokenKey()
        let findings = problems("apps:\n" + Self.tokenApp(name: "news", keyFile: key) + "\n" + Self.tokenApp(name: "news", keyFile: key)
                              + "\n" + Self.tokenApp(name: "has space", keyFile: key))
        #expect(findings.contains { $0.field == "apps[1].name" && $0.line == 10 && $0.message.contains("already configured by apps[0]") })
        #expect(findings.contains { $0.field == "apps[2].name" && $0.line == 18 && $0.message.contains("not a valid job app") })
    }

    @Test func aPlatformNobodyKnowsIsRefused() {
        let findings = problems("""
            apps:
              - name: android
                platform: gcm
                pkcs12: {file: x.p12}
            """)
        #expect(findings.contains { $0.field == "apps[0].platform" && $0.line == 3 && $0.message == "expected one of apns, fcm, webpush, got \"gcm\"" })
    }

    @Test func missingCredentialsAndTopic() {
        let findings = problems("""
            apps:
              - name: news
                token:
                  key_file: k.p8
                  key_id: ABCDE12345
                  team_id: TEAM123456
              - name: shop
            """)
        #expect(findings.contains { $0.field == "apps[0].topic" && $0.message.hasPrefix("required with token credentials") })
        #expect(findings.contains { $0.field == "apps[1]" && $0.line == 7 && $0.message.hasPrefix("no credentials") })
    }

    @Test func settingsThatContradictEachOther() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let findings = problems("""
            worker:
              max_message_bytes: 1024
              max_bytes_in_flight: 4096
            apps:
            \(Self.tokenApp(keyFile: try material.tokenKey()))
            """)
        #expect(findings.map(\.field) == ["worker.chunk_size"])
        #expect(findings.first?.message.contains("above max_message_bytes 1024") == true)
    }

    /// The provider-token refresh stays within APNs' 20…50 minutes unless the sandbox-tests
    /// setting says otherwise; the default is 40 minutes.
    @Test func tokenRefreshBelowTwentyMinutesOnlyForSandboxTests() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let app = Self.tokenApp(keyFile: try material.tokenKey())
        let tooShort = problems("""
            worker:
              token_refresh: 10s
            apps:
            \(app)
            """)
        #expect(tooShort.map(\.field) == ["worker.token_refresh"])
        #expect(tooShort.first?.message.contains("token_refresh_for_sandbox_tests") == true)

        let text = """
            worker:
              token_refresh: 10s
              token_refresh_for_sandbox_tests: true
            apps:
            \(app)
            """
        let loaded = try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "p.yaml"), environment: [:])
        #expect(loaded.worker.effectiveProviderTokenRefresh == .seconds(10))
        let defaults = try ConfigurationLoader.load(try ConfigurationFileReader.parse("apps:\n\(app)", path: "p.yaml"), environment: [:])
        #expect(defaults.worker.effectiveProviderTokenRefresh == .seconds(40 * 60))
    }

    @Test func effectiveConfigurationMasksSecrets() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let (certificate, key) = try material.certificate()
        let file = try ConfigurationFileReader.parse("""
            amqp:
              url: amqp://user:hunter2@127.0.0.1:5672/
            apps:
              - name: shop
                proxy: http://me:proxypass@127.0.0.1:3128
                certificate:
                  cert_file: \(certificate)
                  key_file: \(key)
                  password: {env: SHOP_PASSWORD}
            """, path: "p.yaml")
        let loaded = try ConfigurationLoader.load(file, environment: ["SHOP_PASSWORD": "topsecret"])
        let text = EffectiveConfigurationText.render(loaded)
        #expect(!text.contains("hunter2") && !text.contains("proxypass") && !text.contains("topsecret"))
        #expect(text.contains("url: \"amqp://user:***@127.0.0.1:5672/\""))
        #expect(text.contains("password: {env: SHOP_PASSWORD}  # ***"))
        #expect(text.contains("max_in_flight: 4000"))
        // What is printed reads back as a file.
        #expect(throws: Never.self) { try ConfigurationFileReader.parse(text, path: "printed.yaml") }
    }
}
