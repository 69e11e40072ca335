import GatewayCore
import HTTP2

/// The file's `gateway:` section: what `pushworker gateway` serves and who may use it. The
/// worker ignores it; the gateway reads the apps from the same file to check jobs.
public struct GatewaySection: Sendable, Equatable {
    /// A bearer key for the HTTP job and group API, limited to some apps and a request rate.
    public struct APIKey: Sendable, Equatable {
        /// Names the key in logs and answers (never the secret).
        public var name: String
        public var secret: SecretSource
        /// The apps this key may send to and manage groups of; nil: every app of the file.
        public var apps: Set<String>?
        public var requestsPerSecond: Int?
        public var burst: Int?
        /// Where the file gives it (`gateway.api_keys[2]`), for messages.
        public var field: String

        public init(name: String, secret: SecretSource, apps: Set<String>?, requestsPerSecond: Int? = nil, burst: Int? = nil,
                    field: String = "gateway.api_keys") {
            self.name = name
            self.field = field
            self.secret = secret
            self.apps = apps
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }
    }

    /// A token bucket as the file sets it; what it leaves out takes the default.
    public struct Rate: Sendable, Equatable {
        public var requestsPerSecond: Int?
        public var burst: Int?

        public init(requestsPerSecond: Int? = nil, burst: Int? = nil) {
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }
    }

    public var listen: String?
    public var maxBodyBytes: Int?
    public var relay: Bool?
    public var relayDevelopmentApp: String?
    public var relayProductionApp: String?
    /// `relay_limits.per_address`, `.per_app` and `.max_addresses`.
    public var relayPerAddress: Rate?
    public var relayPerApp: Rate?
    public var relayMaxAddresses: Int?
    /// Proxies whose `X-Forwarded-For` names the client; nil: the gateway's default (loopback).
    public var trustedProxies: [IPNetwork]?
    public var pushdUDP: String?
    public var pushdApp: String?
    public var apiKeys: [APIKey] = []

    public init() {}
}

extension GatewaySection {
    /// The shortest secret accepted: a guessable key would open every app it names.
    public static let minimumSecretLength = 32

    /// Reads every key's secret; each problem names the key's field and says what is missing.
    public func loadKeys(path: String, lines: [String: Int], environment: [String: String]) throws(ConfigurationProblems) -> [LoadedAPIKey] {
        var findings = [ConfigurationFinding]()
        var loaded = [LoadedAPIKey]()
        for key in apiKeys {
            let field = "\(key.field).key"
            switch key.secret.text(environment: environment) {
            case let .failure(error):
                findings.append(ConfigurationFinding(file: path, line: lines[field], field: field, message: error.message))
            case let .success(secret):
                guard secret.count >= Self.minimumSecretLength else {
                    findings.append(ConfigurationFinding(file: path, line: lines[field], field: field,
                        message: "is \(secret.count) characters; use at least \(Self.minimumSecretLength) (openssl rand -base64 32)"))
                    continue
                }
                loaded.append(LoadedAPIKey(name: key.name, secret: secret, apps: key.apps,
                                           requestsPerSecond: key.requestsPerSecond, burst: key.burst))
            }
        }
        guard findings.isEmpty else { throw ConfigurationProblems(findings) }
        return loaded
    }
}
