import APNs
import ArgumentParser
import Foundation
import HTTP2
import Logging
import PushCore
import WorkerConfigurationFile

struct APNsOptions: ParsableArguments {
    @Option(help: "Token auth: the .p8 key file from Apple. [env PUSHWORKER_APNS_KEY_FILE]")
    var apnsKeyFile: String?
    @Option(help: "Token auth: the 10-character Key ID. [env PUSHWORKER_APNS_KEY_ID]")
    var apnsKeyID: String?
    @Option(help: "Token auth: the 10-character Team ID. [env PUSHWORKER_APNS_TEAM_ID]")
    var apnsTeamID: String?
    @Option(help: "The app's bundle ID (apns-topic; push-type suffixes are added). [env PUSHWORKER_APNS_TOPIC]")
    var apnsTopic: String?
    @Option(help: "Certificate auth: PEM certificate, or a PKCS#12 (.p12/.pfx) file. [env PUSHWORKER_APNS_CERT_FILE]")
    var apnsCertFile: String?
    @Option(help: "Certificate auth: PEM private key (when --apns-cert-file is PEM). [env PUSHWORKER_APNS_CERT_KEY_FILE]")
    var apnsCertKeyFile: String?
    @Option(help: "Password of the PKCS#12 file or the encrypted PEM key. Prefer the env variable. [env PUSHWORKER_APNS_CERT_PASSWORD]")
    var apnsCertPassword: String?
    @Option(help: "production (api.push.apple.com) or development (api.sandbox.push.apple.com). Default \(Defaults.apns.environment.rawValue). [env PUSHWORKER_APNS_ENVIRONMENT]")
    var apnsEnvironment: String?
    @Option(help: "Full URL overriding the environment, e.g. https://127.0.0.1:2197 for `pushworker sandbox`. [env PUSHWORKER_APNS_URL]")
    var apnsURL: String?
    @Option(help: "APNs port: 443 or 2197. Default \(Defaults.apns.port). [env PUSHWORKER_APNS_PORT]")
    var apnsPort: Int?
    @Option(help: "Extra CA file trusted besides the system store (the sandbox's ca.pem). [env PUSHWORKER_APNS_CA_FILE]")
    var apnsCAFile: String?
    @Option(help: "HTTP CONNECT proxy for APNs, http://[user:password@]host:port. [env PUSHWORKER_APNS_PROXY]")
    var apnsProxy: String?
    @Option(help: "Most HTTP/2 connections to APNs per app. Default \(Defaults.apns.maxConnections). [env PUSHWORKER_MAX_CONNECTIONS]")
    var maxConnections: Int?
    @Option(help: "Seconds to wait for an APNs answer before retrying the device. Default \(Defaults.seconds(Defaults.apns.requestTimeout)). [env PUSHWORKER_APNS_REQUEST_TIMEOUT]")
    var apnsRequestTimeout: Double?

    /// The options given (here or through their environment variables): with a configuration
    /// file they are refused, since each app's settings are in the file.
    var given: [String] {
        let options: [(String, Bool)] = [
            ("apns-key-file", apnsKeyFile != nil), ("apns-key-id", apnsKeyID != nil), ("apns-team-id", apnsTeamID != nil),
            ("apns-topic", apnsTopic != nil), ("apns-cert-file", apnsCertFile != nil), ("apns-cert-key-file", apnsCertKeyFile != nil),
            ("apns-cert-password", apnsCertPassword != nil), ("apns-environment", apnsEnvironment != nil), ("apns-url", apnsURL != nil),
            ("apns-port", apnsPort != nil), ("apns-ca-file", apnsCAFile != nil), ("apns-proxy", apnsProxy != nil),
            ("max-connections", maxConnections != nil), ("apns-request-timeout", apnsRequestTimeout != nil),
        ]
        return options.filter { $0.1 || Env[$0.0] != nil }.map { "--" + $0.0 }
    }

    /// With a `logger`, the client certificate's bundle ID, topics and expiry are logged.
    /// The file holding the private key: the .p8, the certificate's key file, or the certificate
    /// (PEM with its key, or PKCS#12) itself.
    var privateKeyFile: String? {
        Env.or(apnsKeyFile, "apns-key-file") ?? Env.or(apnsCertKeyFile, "apns-cert-key-file") ?? Env.or(apnsCertFile, "apns-cert-file")
    }

    func configuration(logger: Logger? = nil) throws -> APNsConfiguration {
        let environmentName = Env.or(apnsEnvironment, "apns-environment") ?? Defaults.apns.environment.rawValue
        guard let environment = APNsConfiguration.Environment(rawValue: environmentName) else {
            throw ValidationError("--apns-environment must be production or development, got \"\(environmentName)\"")
        }
        let apnsPort = apnsPort ?? Env["apns-port"].flatMap(Int.init) ?? Defaults.apns.port
        guard apnsPort == 443 || apnsPort == 2197 else {
            throw ValidationError("--apns-port must be 443 or 2197 (use --apns-url for anything else)")
        }
        let keyFile = Env.or(apnsKeyFile, "apns-key-file")
        let certFile = Env.or(apnsCertFile, "apns-cert-file")
        let credentials: APNsConfiguration.Credentials
        var topic = Env.or(apnsTopic, "apns-topic")
        switch (keyFile, certFile) {
        case (nil, nil):
            throw ValidationError("no APNs credentials: give --apns-key-file with --apns-key-id and --apns-team-id (token auth), or --apns-cert-file (certificate auth)")
        case (.some, .some):
            throw ValidationError("give either --apns-key-file (token auth) or --apns-cert-file (certificate auth), not both")
        case let (.some(keyFile), nil):
            // The JWT does not name an app: without a topic every notification would be refused.
            guard Env.or(apnsTopic, "apns-topic") != nil else {
                throw ValidationError("--apns-topic is required with token auth (--apns-key-file): the app's bundle ID, e.g. com.example.app")
            }
            guard let keyID = Env.or(apnsKeyID, "apns-key-id") else { throw ValidationError("--apns-key-id is required with --apns-key-file") }
            guard let teamID = Env.or(apnsTeamID, "apns-team-id") else { throw ValidationError("--apns-team-id is required with --apns-key-file") }
            do {
                credentials = .token(try APNsTokenProvider(keyFile: keyFile, keyID: keyID, teamID: teamID))
            } catch {
                throw ValidationError(error.message)
            }
        case let (nil, .some(certFile)):
            guard FileManager.default.isReadableFile(atPath: certFile) else { throw ValidationError("--apns-cert-file: cannot read \(certFile)") }
            let password = Env.or(apnsCertPassword, "apns-cert-password")
            if let keyFile = Env.or(apnsCertKeyFile, "apns-cert-key-file") {
                credentials = .certificate(.pem(certificateFile: certFile, privateKeyFile: keyFile, password: password))
            } else if certFile.hasSuffix(".pem") || certFile.hasSuffix(".crt") {
                // A PEM holding both the certificate and its key.
                credentials = .certificate(.pem(certificateFile: certFile, privateKeyFile: certFile, password: password))
            } else {
                credentials = .certificate(.pkcs12(file: certFile, password: password ?? ""))
            }
            if case let .certificate(identity) = credentials {
                topic = try Self.checkCertificate(identity, topic: topic, logger: logger)
            }
        }
        var configuration = APNsConfiguration(environment: environment, url: Env.or(apnsURL, "apns-url"), port: apnsPort,
                                              credentials: credentials, topic: topic)
        configuration.extraCAFile = Env.or(apnsCAFile, "apns-ca-file")
        if let maxConnections = maxConnections ?? Env["max-connections"].flatMap(Int.init) {
            configuration.maxConnections = max(1, maxConnections)
        }
        if let seconds = apnsRequestTimeout ?? Env["apns-request-timeout"].flatMap(Double.init) {
            configuration.requestTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let proxy = Env.or(apnsProxy, "apns-proxy") { configuration.proxy = try Self.parseProxy(proxy) }
        do { _ = try configuration.endpoint() } catch { throw ValidationError(error.message) }
        return configuration
    }

    /// Refuses a certificate that cannot work (malformed, mismatched key, expired: the message
    /// names the file) and a topic it does not cover; without --apns-topic, the certificate's bundle
    /// ID is the topic. Returns the topic to use.
    static func checkCertificate(_ identity: TLSClientIdentity, topic: String?, logger: Logger?) throws -> String? {
        let summary: CertificateSummary
        do { summary = try identity.inspect() } catch { throw ValidationError("--apns-cert-file: \(error.message)") }
        logger?.info("APNs client certificate", metadata: [
            "apns.certificate.bundle_id": "\(summary.bundleID ?? "none")",
            "apns.certificate.topics": "\(summary.topics.joined(separator: ", "))",
            "apns.certificate.valid_until": "\(summary.validUntil)",
        ])
        do {
            let resolved = try APNsCertificateTopic.resolve(given: topic, certificate: summary)
            if topic == nil { logger?.info("no --apns-topic: using the certificate's bundle ID", metadata: ["apns.topic": "\(resolved)"]) }
            return resolved
        } catch {
            throw ValidationError(error.message)
        }
    }

    static func parseProxy(_ text: String) throws -> HTTPProxy {
        do { return try ProxyURL.parse(text) } catch {
            throw ValidationError("--apns-proxy: \(error.message)")
        }
    }
}
