import APNsCore
import HTTP2
import PushCore

/// How one app reaches APNs: where, with which credentials, and for which bundle ID.
public struct APNsConfiguration: Sendable {
    public enum Environment: String, Sendable, CaseIterable {
        case production, development

        public var host: String {
            switch self {
            case .production: "api.push.apple.com"
            case .development: "api.sandbox.push.apple.com"
            }
        }

        /// Where broadcast channels are created, read, listed and deleted (Apple, "Sending channel
        /// management requests to APNs"): a host and port of their own, not the push host's.
        public var channelManagementHost: String {
            switch self {
            case .production: "api-manage-broadcast.push.apple.com"
            case .development: "api-manage-broadcast.sandbox.push.apple.com"
            }
        }

        public var channelManagementPort: Int {
            switch self {
            case .production: 2196
            case .development: 2195
            }
        }
    }

    public enum Credentials: Sendable {
        /// `.p8` key, Key ID and Team ID (token-based connection).
        case token(APNsTokenProvider)
        /// TLS client certificate (certificate-based connection).
        case certificate(TLSClientIdentity)
    }

    public var environment: Environment
    /// Replaces the environment's host and port, e.g. `https://127.0.0.1:2197` for the sandbox.
    public var url: String?
    /// 443 or 2197 (same service; 2197 lets firewalls tell APNs from other HTTPS).
    public var port: Int
    /// `broadcast_management_url`: replaces the environment's channel-management host and port
    /// (2196, or 2195 in development), e.g. the sandbox's management listener.
    public var broadcastManagementURL: String?
    /// `push_type_rules`: a job that breaks its push type's rules is rejected (the default), or
    /// sent with a warning (`warn`).
    public var pushTypeRules: APNsJobRules.PushTypeRules = .reject
    public var credentials: Credentials
    /// The app's bundle ID; the push type's suffix is added per notification.
    public var topic: String?
    public var extraCAFile: String?
    public var proxy: HTTPProxy?
    public var maxConnections: Int = 4
    /// Streams per connection at most; the connection's SETTINGS_MAX_CONCURRENT_STREAMS bounds it too.
    public var maxStreamsPerConnection: Int = 1000
    /// Notifications started per second on each connection at most (nil: no limit). With every
    /// connection at its limit another opens, up to `maxConnections`, before notifications wait.
    public var maxNotificationsPerSecondPerConnection: Int?
    /// What the worker does with this app's invalid tokens: remove each from the Redis groups
    /// its job's devices came from (pushd removed a device on 410).
    public var pruneInvalidTokens = false
    public var requestTimeout: Duration = .seconds(30)
    public var connectTimeout: Duration = .seconds(10)
    /// A connection quiet this long is PINGed, so a dead one is found before a request waits on it.
    public var idlePingInterval: Duration = .seconds(60)
    /// Connections without a request for this long are closed (one is kept).
    public var idleConnectionTimeout: Duration = .seconds(300)

    /// Whether requests carry a provider token (JWT), which `location` and `liveactivity` pushes need.
    public var usesTokenAuthentication: Bool {
        if case .token = credentials { true } else { false }
    }

    public init(environment: Environment = .production, url: String? = nil, port: Int = 443, credentials: Credentials, topic: String?) {
        self.environment = environment
        self.url = url
        self.port = port
        self.credentials = credentials
        self.topic = topic
    }

    /// Host and port the connections go to.
    public func endpoint() throws(APNsConfigurationError) -> (host: String, port: Int) {
        guard let url else { return (environment.host, port) }
        do throws(ServiceURLError) {
            // APNs is HTTP/2 over TLS: https only; the project's one URL parser reads it.
            let parsed = try ServiceURL(parsing: url, schemes: ["https"])
            guard !parsed.host.isEmpty else { throw ServiceURLError("no host") }
            return (parsed.host, parsed.port ?? 443)
        } catch {
            throw APNsConfigurationError("apns-url: \(error.message)")
        }
    }

    /// Host and port of the broadcast channel-management API.
    public func channelManagementEndpoint() throws(APNsConfigurationError) -> (host: String, port: Int) {
        guard let broadcastManagementURL else { return (environment.channelManagementHost, environment.channelManagementPort) }
        do throws(ServiceURLError) {
            let parsed = try ServiceURL(parsing: broadcastManagementURL, schemes: ["https"])
            guard !parsed.host.isEmpty else { throw ServiceURLError("no host") }
            return (parsed.host, parsed.port ?? 443)
        } catch {
            throw APNsConfigurationError("broadcast_management_url: \(error.message)")
        }
    }
}
