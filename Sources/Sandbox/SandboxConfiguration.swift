import NIOCore
import APNsCore
import PushCore

/// An ES256 (P-256) provider-token key the sandbox accepts, as APNs knows a developer account's keys.
public struct SandboxTokenKey: Sendable, Hashable {
    public var keyID: String
    public var teamID: String
    /// The public key (or, for convenience, the `.p8` private key: its public half is used).
    public var publicKeyPEM: String

    public init(keyID: String, teamID: String, publicKeyPEM: String) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyPEM = publicKeyPEM
    }
}

/// A scripted answer for requests that pass authentication and validation.
public struct SandboxRule: Sendable, Codable, Hashable {
    /// Exact device token (lowercase hex) …
    public var token: String?
    /// … or a token prefix. Either makes the rule one for device pushes only.
    public var tokenPrefix: String?
    /// Exact broadcast channel ID: the rule answers only broadcasts on that channel (403
    /// FeatureNotEnabled, 404 ChannelNotRegistered, …). With none of `token`, `tokenPrefix` and
    /// `channel`, the rule matches every request, device push or broadcast.
    public var channel: String?
    /// Only requests for this `apns-topic` (an app's bundle ID; a broadcast's is the one in its
    /// path): answering one app's requests with 403 InvalidProviderToken is how APNs treats a
    /// revoked key, while other apps go on.
    public var topic: String?
    public var status: Int
    /// APNs reason for the error body; 410 answers also carry `"timestamp"` (now, in ms).
    public var reason: String?
    /// Answer this way only for the first N matching requests, then behave normally (nil: always).
    public var times: Int?

    /// Statuses `PUT /_sandbox/rules` accepts (`times` must be ≥ 0): final answers only, a 1xx
    /// ends the stream with PROTOCOL_ERROR.
    public static let statuses: ClosedRange<Int> = 200...599

    public init(
        token: String? = nil, tokenPrefix: String? = nil, channel: String? = nil, topic: String? = nil,
        status: Int, reason: String? = nil, times: Int? = nil
    ) {
        self.token = token
        self.tokenPrefix = tokenPrefix
        self.channel = channel
        self.topic = topic
        self.status = status
        self.reason = reason
        self.times = times
    }

    /// A rule answering with an APNs reason and the status APNs pairs with it (400 for `.unknown`).
    public init(
        token: String? = nil, tokenPrefix: String? = nil, channel: String? = nil, topic: String? = nil,
        reason: APNsReason, times: Int? = nil
    ) {
        self.init(
            token: token, tokenPrefix: tokenPrefix, channel: channel, topic: topic,
            status: reason.status ?? 400, reason: reason.rawValue, times: times
        )
    }

    /// `candidateChannel` is a broadcast's channel ID, nil for a device push.
    func matches(token candidate: String, topic candidateTopic: String, channel candidateChannel: String?) -> Bool {
        if let topic, topic != candidateTopic { return false }
        if let channel, channel != candidateChannel { return false }
        if self.token != nil || self.tokenPrefix != nil {
            guard candidateChannel == nil else { return false }
            if let token, token != candidate { return false }
            if let tokenPrefix, !candidate.hasPrefix(tokenPrefix) { return false }
        }
        return true
    }
}

/// Connection-level misbehaviour, counted per connection (the N-th request of each connection).
public struct SandboxFaults: Sendable, Codable, Hashable {
    /// After every N-th request: GOAWAY(NO_ERROR, last stream id, `{"reason":"Shutdown"}`), close once drained.
    public var goAwayEveryRequests: Int?
    /// Close the TCP connection abruptly on every N-th request, leaving it unanswered.
    public var resetEveryRequests: Int?
    /// Never answer every N-th request (the client must time out).
    public var stallEveryRequests: Int?
    /// Added before each answer, on the event loop's scheduler.
    public var latency: Duration

    /// What `PUT /_sandbox/faults` accepts: more is a typo, and a latency of ~300 years overflows
    /// the nanosecond deadline of a delayed answer. 0 turns a fault off.
    public static let latencyMilliseconds: ClosedRange<Int> = 0...600_000
    public static let everyRequests: ClosedRange<Int> = 0...1_000_000_000

    public init(
        goAwayEveryRequests: Int? = nil,
        resetEveryRequests: Int? = nil,
        stallEveryRequests: Int? = nil,
        latency: Duration = .zero
    ) {
        self.goAwayEveryRequests = goAwayEveryRequests
        self.resetEveryRequests = resetEveryRequests
        self.stallEveryRequests = stallEveryRequests
        self.latency = latency
    }
}

/// Everything `APNsSandbox` needs to listen and answer like APNs.
public struct SandboxConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    /// 2197 is APNs' alternative port; 0 binds an ephemeral one.
    public var port: Int = 2197
    /// Generated CA, certificates and token key are written here once and reused afterwards.
    public var stateDirectory: String = ".pushworker/sandbox"
    /// Serve this certificate and key instead of the generated server identity.
    public var certificateFile: String?
    public var privateKeyFile: String?
    /// The SETTINGS_MAX_CONCURRENT_STREAMS advertised once a connection is authenticated.
    public var maxConcurrentStreams: Int = 1000
    /// A connection whose provider token changes sooner than this after the last change is
    /// answered 429 TooManyProviderTokenUpdates. APNs' 20 minutes; shorter only so that tests of
    /// token refreshing need not run for hours.
    public var providerTokenMinimumUpdateInterval: Duration = .seconds(20 * 60)
    /// Keys accepted for token authentication; empty: the generated key.
    public var tokenKeys: [SandboxTokenKey] = []
    /// Bundle IDs accepted (with any push-type suffix), for pushes, broadcasts and channels; empty: any.
    public var allowedTopics: [String] = []
    public var rules: [SandboxRule] = []
    public var faults = SandboxFaults()
    /// At most this many notifications are kept; the oldest are dropped, counters keep counting.
    public var recordLimit: Int = 1_000_000
    /// One stdout line per accepted notification, for demos.
    public var logNotifications: Bool = false
    public var threads: Int = System.coreCount

    public init() {}
}
