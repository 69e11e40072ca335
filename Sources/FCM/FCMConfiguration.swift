import HTTP2
import PushCore

/// How one app reaches FCM: its service account, and the connections' limits.
public struct FCMConfiguration: Sendable {
    public static let host = "fcm.googleapis.com"
    /// Google raised its Admin SDKs' timeout to 15 s after shorter ones retried requests FCM had
    /// accepted, which duplicated notifications.
    public static let minimumRequestTimeout: Duration = .seconds(15)

    public var serviceAccount: FCMServiceAccount
    /// Replaces `https://fcm.googleapis.com`, e.g. `https://127.0.0.1:2198` for the sandbox (the
    /// token endpoint is the service account's `token_uri`).
    public var url: String?
    /// A PEM file of CAs trusted besides the system store (the sandbox's `ca.pem`), for FCM and the token endpoint.
    public var extraCAFile: String?
    public var proxy: HTTPProxy?
    public var maxConnections: Int = 4
    /// FCM closes a connection with GOAWAY past ~100 streams; SETTINGS bound it too.
    public var maxStreamsPerConnection: Int = 100
    /// What the worker does with this app's invalid tokens: remove each from the Redis groups its
    /// job's devices came from.
    public var pruneInvalidTokens = false
    /// At least `minimumRequestTimeout`.
    public var requestTimeout: Duration = .seconds(30)
    public var connectTimeout: Duration = .seconds(10)
    /// A connection quiet this long is PINGed, so a dead one is found before a request waits on it.
    public var idlePingInterval: Duration = .seconds(60)
    /// Connections without a request for this long are closed (one is kept).
    public var idleConnectionTimeout: Duration = .seconds(300)

    public init(serviceAccount: FCMServiceAccount, url: String? = nil) {
        self.serviceAccount = serviceAccount
        self.url = url
    }

    /// Reads the service-account key file at `path`.
    public init(serviceAccountFile path: String, url: String? = nil) throws(FCMConfigurationError) {
        self.init(serviceAccount: try FCMServiceAccount(contentsOfFile: path), url: url)
    }

    /// Host and port the sends go to.
    public func endpoint() throws(FCMConfigurationError) -> (host: String, port: Int) {
        guard let url else { return (Self.host, 443) }
        do throws(ServiceURLError) {
            let parsed = try ServiceURL(parsing: url, schemes: ["https"])
            guard !parsed.host.isEmpty else { throw ServiceURLError("no host") }
            guard parsed.rawPath.isEmpty else { throw ServiceURLError("give the origin only, without a path") }
            return (parsed.host, parsed.port ?? 443)
        } catch {
            throw FCMConfigurationError(field: "fcm-url", error.message)
        }
    }

    /// Host, port and path of the service account's `token_uri`.
    func tokenEndpoint() throws(FCMConfigurationError) -> (host: String, port: Int, path: String) {
        do throws(ServiceURLError) {
            let parsed = try ServiceURL(parsing: serviceAccount.tokenURI, schemes: ["https"])
            return (parsed.host, parsed.port ?? 443, "/" + parsed.rawPath)
        } catch {
            throw FCMConfigurationError(field: "token_uri", error.message)
        }
    }

    /// The checks `FCMClient` applies before it connects: the settings' own limits (a request
    /// timeout of at least 15 s).
    public func check() throws(FCMConfigurationError) {
        guard requestTimeout >= Self.minimumRequestTimeout else {
            throw FCMConfigurationError(field: "request-timeout", "must be at least 15 s for FCM (shorter timeouts retry messages FCM accepted, and devices get duplicates), got \(DurationText.format(requestTimeout))")
        }
        guard maxConnections >= 1 else { throw FCMConfigurationError(field: "max-connections", "must be at least 1, got \(maxConnections)") }
        guard maxStreamsPerConnection >= 1 else {
            throw FCMConfigurationError(field: "max-streams-per-connection", "must be at least 1, got \(maxStreamsPerConnection)")
        }
    }
}
