import PlatformCatalog
import APNs
import APNsCore
import WebPush

/// One app of the file's `apps` list, as written: nothing loaded or checked beyond types yet.
public struct AppEntry: Sendable, Equatable {
    /// Where the app's devices are: Apple's APNs, Firebase Cloud Messaging, browsers' Web Push.
    public typealias Platform = PlatformCatalog.Platform

    /// `allowed_endpoint_ports`: a list of ports, or `any`.
    public enum EndpointPorts: Sendable, Equatable {
        case any
        case only(Set<Int>)
    }

    public enum Credentials: Sendable, Equatable {
        /// A .p8 key with its Key ID and Team ID.
        case token(key: SecretSource, keyID: String, teamID: String)
        /// PEM certificate and key (the same file when it holds both), the key maybe encrypted.
        case certificate(certificateFile: String, keyFile: String?, password: SecretSource?)
        case pkcs12(file: String, password: SecretSource?)
        /// A Web Push app's VAPID key (the base64url private scalar `pushworker webpush keys`
        /// prints), its contact, and optionally its public key to check the pair against.
        case vapid(privateKey: SecretSource, subject: String, publicKey: String?)
        /// An FCM app's Google service-account key file (JSON), from a file or the environment.
        case serviceAccount(SecretSource)
    }

    /// The job's `app`.
    public var name: String
    public var platform: Platform
    public var environment: APNsConfiguration.Environment?
    /// `push_type_rules` (APNs): reject (the default) or warn.
    public var pushTypeRules: APNsJobRules.PushTypeRules?
    public var url: String?
    /// `broadcast_management_url` (APNs): the channel-management host, replacing the environment's.
    public var broadcastManagementURL: String?
    public var port: Int?
    public var topic: String?
    public var credentials: Credentials
    public var maxConnections: Int?
    public var maxStreams: Int?
    /// Notifications started per second on each connection at most (pushd's `-r`).
    public var notificationsPerSecond: Int?
    /// Web Push: push-service origins with connections at once.
    public var maxOrigins: Int?
    /// Web Push: send to endpoints on loopback, private and other non-public addresses.
    public var allowPrivateEndpoints: Bool?
    /// Web Push: the endpoint ports sent to.
    public var allowedEndpointPorts: EndpointPorts?
    /// Web Push: the push services whose refusals of several subscriptions may pause the app.
    public var trustedPushServices: [WebPushServiceName]?
    /// Remove tokens APNs calls invalid from the groups they came from.
    public var pruneInvalidTokens: Bool?
    public var pingInterval: Duration?
    public var idleTimeout: Duration?
    public var requestTimeout: Duration?
    public var connectTimeout: Duration?
    public var caFile: String?
    public var proxy: String?

    /// Where the entry is (`apps[1]`) and the line of each of its fields, for messages.
    public var field: String
    public var lines: [String: Int]

    public init(name: String, platform: Platform = .apns, credentials: Credentials, field: String, lines: [String: Int] = [:]) {
        self.name = name
        self.platform = platform
        self.credentials = credentials
        self.field = field
        self.lines = lines
    }
}

/// The whole file as written.
public struct ConfigurationFile: Sendable, Equatable {
    /// As given (messages name it this way).
    public var path: String
    public var settings: WorkerSettings
    public var apps: [AppEntry]
    /// The line of each field path (`worker.prefetch`, `apps[0].topic`).
    public var lines: [String: Int]
    /// What `pushworker gateway` serves; nil when the file has no `gateway:` section.
    public var gateway: GatewaySection?

    public init(path: String, settings: WorkerSettings = WorkerSettings(), apps: [AppEntry] = [], lines: [String: Int] = [:]) {
        self.path = path
        self.settings = settings
        self.apps = apps
        self.lines = lines
    }
}
