import APNs
import FCM
import Foundation
import HTTP2
import PlatformCatalog
import PushTransport
import WebPush
import Worker

/// A file turned into what the worker runs with: the settings layered (file under environment
/// and flags), every app's credentials loaded and checked as a connection would use them.
public struct LoadedConfiguration: Sendable {
    public var worker: WorkerConfiguration
    /// The settings in effect, file and overrides together.
    public var settings: WorkerSettings
    public var apps: [AppEntry]
    /// Things to say but not to stop for (a certificate close to its end, a key file others can read).
    public var warnings: [ConfigurationFinding]
    /// The warnings about key files others can read (in `warnings` too): logged at start, where a
    /// certificate's end has a watch of its own (`CertificateExpiry`).
    public var exposedKeyFiles: [ConfigurationFinding]
    /// Each certificate-authenticated app's certificate end, for warnings while running.
    public var certificates: [CertificateExpiry]
    /// Per app: what a reload compares to keep or renew its client.
    public var fingerprints: [String: AppFingerprint]
}

public enum ConfigurationLoader {
    /// - Parameters:
    ///   - overrides: settings from the environment and the command line, which win over the file.
    ///   - environment: where `{env: NAME}` secrets are read.
    public static func load(_ file: ConfigurationFile, overrides: WorkerSettings = WorkerSettings(),
                            environment: [String: String], now: Date = Date(),
                            connectionName: String = "pushworker") throws(ConfigurationProblems) -> LoadedConfiguration {
        var findings = [ConfigurationFinding]()
        let settings = file.settings.overridden(by: overrides)
        func settingFinding(_ error: SettingError) {
            let field = error.setting.contains(".") ? error.setting : "worker.\(error.setting)"
            findings.append(ConfigurationFinding(file: file.path, line: file.lines[field], field: field, message: error.message))
        }
        var apps = [String: any AppDefinition]()
        var certificates = [CertificateExpiry]()
        var exposedKeyFiles = [ConfigurationFinding]()
        for app in file.apps {
            exposedKeyFiles += KeyFileExposure.findings(for: app, file: file.path)
            if app.platform == .webpush {
                apps[app.name] = webPushConfiguration(for: app, path: file.path, environment: environment, findings: &findings)
                continue
            }
            if app.platform == .fcm {
                apps[app.name] = fcmConfiguration(for: app, path: file.path, environment: environment, findings: &findings)
                continue
            }
            guard let loaded = apnsConfiguration(for: app, path: file.path, environment: environment, findings: &findings) else { continue }
            let (configuration, expiry) = loaded
            apps[app.name] = configuration
            if let expiry {
                certificates.append(expiry)
                if let warning = expiry.warning(now: now) {
                    let field = app.certificateField
                    findings.append(ConfigurationFinding(.warning, file: file.path, line: app.lines[field], field: field, message: warning))
                }
            }
        }
        var worker: WorkerConfiguration?
        do {
            let (amqp, redis) = try settings.connections(connectionName: connectionName)
            var configuration = WorkerConfiguration(amqp: amqp, redis: redis, apps: apps)
            configuration.jobPlatforms = Platform.allJobRules
            try settings.apply(to: &configuration)
            worker = configuration
        } catch {
            settingFinding(error)
        }
        findings += exposedKeyFiles
        let problems = ConfigurationProblems(findings)
        guard problems.errors.isEmpty, let worker else { throw problems }
        return LoadedConfiguration(worker: worker, settings: settings, apps: file.apps,
                                   warnings: findings.filter { $0.severity == .warning }, exposedKeyFiles: exposedKeyFiles,
                                   certificates: certificates,
                                   fingerprints: Dictionary(file.apps.map { ($0.name, AppFingerprint($0, environment: environment)) },
                                                            uniquingKeysWith: { first, _ in first }))
    }

    /// One app's APNs settings with its credentials loaded; nil after recording why not.
    static func apnsConfiguration(for app: AppEntry, path: String, environment: [String: String],
                                  findings: inout [ConfigurationFinding]) -> (APNsConfiguration, CertificateExpiry?)? {
        let before = findings.count
        func fail(_ field: String, _ message: String) {
            let full = "\(app.field).\(field)"
            findings.append(ConfigurationFinding(file: path, line: app.lines[full] ?? app.lines[app.field], field: full, message: message))
        }
        var credentials: APNsConfiguration.Credentials?
        var topic = app.topic
        var expiry: CertificateExpiry?
        if case let .token(key, keyID, teamID) = app.credentials {
            let field = key.isFile ? "token.key_file" : "token.key"
            switch key.bytes(environment: environment) {
            case let .failure(error): fail(field, error.message)
            case let .success(pem):
                do { credentials = .token(try APNsTokenProvider(keyPEM: pem, keyID: keyID, teamID: teamID)) } catch {
                    fail(field, "not a usable .p8 key: \(error.message)")
                }
            }
        } else {
            let (identity, file, field) = identity(of: app, environment: environment, fail: fail)
            if let identity {
                do throws(HTTP2Error) {
                    let summary = try identity.inspect()
                    do { topic = try APNsCertificateTopic.resolve(given: topic, certificate: summary, option: "topic") } catch {
                        fail("topic", error.message)
                    }
                    expiry = CertificateExpiry(app: app.name, file: file, summary: summary)
                    credentials = .certificate(identity)
                } catch {
                    fail(field, error.message)
                }
            }
        }
        guard let credentials, findings.count == before else { return nil }
        var configuration = APNsConfiguration(environment: app.environment ?? .production, url: app.url,
                                              port: app.port ?? 443, credentials: credentials, topic: topic)
        ConnectionSettingKeys<APNsConfiguration>.apns.apply(app, to: &configuration, fail: fail)
        if let rules = app.pushTypeRules { configuration.pushTypeRules = rules }
        configuration.broadcastManagementURL = app.broadcastManagementURL
        do { _ = try configuration.endpoint() } catch { fail("url", error.message) }
        do { _ = try configuration.channelManagementEndpoint() } catch { fail("broadcast_management_url", error.message) }
        guard findings.count == before else { return nil }
        return (configuration, expiry)
    }

    /// One Web Push app's settings with its VAPID key loaded and checked; nil after recording why not.
    static func webPushConfiguration(for app: AppEntry, path: String, environment: [String: String],
                                     findings: inout [ConfigurationFinding]) -> WebPushConfiguration? {
        func fail(_ field: String, _ message: String) {
            let full = "\(app.field).\(field)"
            findings.append(ConfigurationFinding(file: path, line: app.lines[full] ?? app.lines[app.field], field: full, message: message))
        }
        guard case let .vapid(keySource, subjectText, publicKeyText) = app.credentials else { return nil }
        let before = findings.count
        var key: VAPIDKey?
        switch keySource.text(environment: environment) {
        case let .failure(error): fail("vapid.private_key", error.message)
        case let .success(text):
            do { key = try VAPIDKey(privateKeyBase64URL: text.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
                fail("vapid.private_key", "not a VAPID private key: \(error.message) (expected the base64url text pushworker webpush keys prints)")
            }
        }
        if let key, let publicKeyText, publicKeyText != key.publicKeyBase64URL {
            fail("vapid.public_key", "does not belong to vapid.private_key (its public key is \(key.publicKeyBase64URL)): browsers subscribed with the public key would refuse every message")
        }
        var subject: VAPIDSubject?
        do { subject = try VAPIDSubject(subjectText) } catch { fail("vapid.subject", error.message) }
        guard let key, let subject, findings.count == before else { return nil }
        var configuration = WebPushConfiguration(vapidKey: key, subject: subject)
        if let value = app.maxOrigins { configuration.maxOrigins = value }
        if let value = app.allowPrivateEndpoints { configuration.allowPrivateEndpoints = value }
        if let value = app.trustedPushServices { configuration.trustedPushServices = value }
        switch app.allowedEndpointPorts {
        case .any: configuration.allowedEndpointPorts = nil
        case let .only(ports): configuration.allowedEndpointPorts = ports
        case nil: break
        }
        ConnectionSettingKeys<WebPushConfiguration>.webPush.apply(app, to: &configuration, fail: fail)
        return findings.count == before ? configuration : nil
    }

    /// One FCM app's settings with its service account read and checked; nil after recording why not.
    static func fcmConfiguration(for app: AppEntry, path: String, environment: [String: String],
                                 findings: inout [ConfigurationFinding]) -> FCMConfiguration? {
        func fail(_ field: String, _ message: String) {
            let full = "\(app.field).\(field)"
            findings.append(ConfigurationFinding(file: path, line: app.lines[full] ?? app.lines[app.field], field: full, message: message))
        }
        guard case let .serviceAccount(source) = app.credentials else { return nil }
        let before = findings.count
        let account: FCMServiceAccount
        switch source.bytes(environment: environment) {
        case let .failure(error):
            fail("service_account", error.message)
            return nil
        case let .success(bytes):
            do { account = try FCMServiceAccount(json: bytes) } catch {
                fail("service_account", "not a usable service-account key file: \(error.description)")
                return nil
            }
        }
        var configuration = FCMConfiguration(serviceAccount: account, url: app.url)
        ConnectionSettingKeys<FCMConfiguration>.fcm.apply(app, to: &configuration, fail: fail)
        do {
            try configuration.check()
            _ = try configuration.endpoint()
        } catch {
            // FCM names its settings as flags (request-timeout); the file names them with underscores.
            let field = switch error.field {
            case "fcm-url": "url"
            case "max-streams-per-connection": "max_streams"
            case let other?: other.replacing("-", with: "_")
            case nil: "service_account"
            }
            fail(field, error.problem)
        }
        return findings.count == before ? configuration : nil
    }

    /// The TLS identity of a certificate or PKCS#12 app, its file, and the field that names it.
    private static func identity(of app: AppEntry, environment: [String: String],
                                 fail: (String, String) -> Void) -> (TLSClientIdentity?, String, String) {
        func password(_ source: SecretSource?, field: String) -> (ok: Bool, value: String?) {
            guard let source else { return (true, nil) }
            switch source.text(environment: environment) {
            case let .success(text): return (true, text)
            case let .failure(error):
                fail(field, error.message)
                return (false, nil)
            }
        }
        switch app.credentials {
        case let .certificate(certificateFile, keyFile, secret):
            guard FileManager.default.isReadableFile(atPath: certificateFile) else {
                fail("certificate.cert_file", "cannot read \(certificateFile)")
                return (nil, certificateFile, "certificate.cert_file")
            }
            if let keyFile, !FileManager.default.isReadableFile(atPath: keyFile) {
                fail("certificate.key_file", "cannot read \(keyFile)")
                return (nil, certificateFile, "certificate.key_file")
            }
            let (ok, value) = password(secret, field: "certificate.password")
            guard ok else { return (nil, certificateFile, "certificate.password") }
            // Without key_file the certificate's file holds the key too.
            return (.pem(certificateFile: certificateFile, privateKeyFile: keyFile ?? certificateFile, password: value), certificateFile, "certificate.cert_file")
        case let .pkcs12(file, secret):
            guard FileManager.default.isReadableFile(atPath: file) else {
                fail("pkcs12.file", "cannot read \(file)")
                return (nil, file, "pkcs12.file")
            }
            let (ok, value) = password(secret, field: "pkcs12.password")
            guard ok else { return (nil, file, "pkcs12.password") }
            return (.pkcs12(file: file, password: value ?? ""), file, "pkcs12.file")
        case .token, .vapid, .serviceAccount:
            return (nil, "", "token")
        }
    }
}

extension AppEntry {
    /// The field naming the certificate, where its warnings point.
    var certificateField: String {
        switch credentials {
        case .certificate: "\(field).certificate.cert_file"
        case .pkcs12: "\(field).pkcs12.file"
        case .token: "\(field).token"
        case .vapid: "\(field).vapid"
        case .serviceAccount: "\(field).service_account"
        }
    }
}

extension SecretSource {
    var isFile: Bool { if case .file = self { true } else { false } }
}
