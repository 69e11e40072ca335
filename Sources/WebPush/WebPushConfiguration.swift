import HTTP2

/// How one app sends Web Push: its VAPID key and contact, and how it treats the push services
/// its subscriptions point at (each origin gets a connection pool of its own, made when first used).
public struct WebPushConfiguration: Sendable {
    /// The application server key browsers subscribed with (`applicationServerKey`).
    public var vapidKey: VAPIDKey
    /// The VAPID `sub`: how a push service can reach the sender.
    public var subject: VAPIDSubject
    /// CAs trusted besides the system's (a test push service).
    public var extraCAFile: String?
    public var proxy: HTTPProxy?
    /// Push-service origins with a connection pool (an I/O thread and its connections) at once.
    /// Subscriptions of one app point at a handful of services (Google, Mozilla, Apple, and
    /// Microsoft's many `*.notify.windows.com` hosts); beyond this the least recently used idle pool
    /// closes, and while every pool is busy a new origin's device is retried later.
    public var maxOrigins = 64
    /// Connections to each origin at most.
    public var maxConnectionsPerOrigin = 2
    /// Streams per connection at most; the service's SETTINGS_MAX_CONCURRENT_STREAMS bounds it too.
    public var maxStreamsPerConnection = 100
    public var maxNotificationsPerSecondPerConnection: Int?
    /// Send to endpoints whose host is (or resolves to) a loopback, private, link-local or other
    /// non-public address (`IPAddressScope`). Off: subscriptions are written by anyone, and one
    /// at `https://127.0.0.1:6379/` would otherwise have the worker connect to its own network.
    /// On for a local test service or an on-premises push service.
    public var allowPrivateEndpoints = false
    /// The endpoint ports sent to; nil: any. Separate from `allowPrivateEndpoints`, which leaves
    /// it as it is: an app that may reach its on-premises service still cannot be pointed at
    /// another port of the same network (Redis, a database).
    public var allowedEndpointPorts: Set<Int>? = [443]
    /// Push services whose refusals of several subscriptions say the app's VAPID key or subject is
    /// refused (`WebPushRefusalJudge`): host names, `*.` for a domain's hosts, `:port` when not 443.
    public var trustedPushServices = WebPushServiceName.wellKnown
    /// Remove subscriptions the service calls gone from the groups the job's devices came from.
    public var pruneInvalidTokens = false
    public var requestTimeout: Duration = .seconds(30)
    public var connectTimeout: Duration = .seconds(10)
    public var idlePingInterval: Duration = .seconds(60)
    /// An origin's connections close after this long without a request (none is kept open), and
    /// its pool with them: its I/O thread exits (`OriginPoolTable`).
    public var idleConnectionTimeout: Duration = .seconds(300)
    /// The name of each origin pool's I/O thread (at most 15 bytes are kept).
    public var ioThreadName = "webpush-io"
    var idlePoolTimeout: Duration { idleConnectionTimeout }
    /// The longest `TTL` sent: Mozilla's service refuses more than 30 days.
    public static let maxTTLSeconds = 30 * 86_400

    public init(vapidKey: VAPIDKey, subject: VAPIDSubject) {
        self.vapidKey = vapidKey
        self.subject = subject
    }

    /// What a VAPID refusal tells the operator to check: the key by its public half, and the subject.
    public var credentialsHint: String {
        "the VAPID key (public key \(vapidKey.publicKeyBase64URL.prefix(16))…) and vapid.subject \(subject.value)"
    }
}
