import AMQP
import HTTP2
import Redis
import GatewayCore
import PlatformCatalog

/// What `pushworker gateway` serves, gathered from its options, the environment and the file.
public struct GatewaySettings: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (the log and `onListening` say which).
    public var port = 8080
    /// The largest request body taken; a larger one is answered 413 before it is read whole.
    public var maxBodyBytes = 1 << 20
    /// A connection that sends no complete request for this long is closed: a client holding
    /// connections open with half a request (slowloris) holds each for this long at most.
    public var idleTimeout: Duration = .seconds(30)
    public var apiKeys: [LoadedAPIKey] = []
    /// A key's rate when its entry sets none: requests per second, and the burst above it.
    public var defaultRequestsPerSecond = 100
    public var defaultBurst = 200
    /// Every app jobs may name, with its platform (which says what a device is).
    public var apps: [String: Platform] = ["default": .apns]
    public var jobQueue = "push.jobs"
    /// The workers' `--queue-type`: with quorum queues the gateway only checks the job queue exists.
    public var queueType = QueueType.classic
    public var groupKeyPrefix = "group:"
    public var relayEnabled = true
    public var relayDevelopmentApp = "default"
    public var relayProductionApp = "default"
    public var relayLimits = RelayLimits()
    /// Proxies whose `X-Forwarded-For` names the client for the relay's per-address limit. By
    /// default loopback: the gateway listens on 127.0.0.1 behind a proxy on the same host.
    public var trustedProxies = GatewaySettings.loopback
    public var pushd: PushdEndpoints?
    public var pushdApp = "default"
    /// How long a publish waits for the broker's confirm before the request is answered 503.
    public var publishTimeout: Duration = .seconds(10)
    public var amqp: AMQPConfiguration
    public var redis: RedisConfiguration

    public init(amqp: AMQPConfiguration, redis: RedisConfiguration) {
        self.amqp = amqp
        self.redis = redis
    }

    public static let loopback = ["127.0.0.0/8", "::1"].compactMap(IPNetwork.init)
}

/// pushd's two UDP ports on one host: group registrations, then notification requests.
public struct PushdEndpoints: Sendable, Equatable {
    public var host: String
    public var registrationPort: Int
    public var notificationPort: Int

    /// `HOST:REGISTRATION,NOTIFICATION` as `--pushd-udp` takes it (pushd's defaults are
    /// `127.0.0.1:7734,7874`); a bare `HOST` takes pushd's ports.
    public init(parsing text: String) throws(GatewaySettingError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        host = parts[0].isEmpty ? "127.0.0.1" : parts[0]
        guard parts.count == 2 else {
            registrationPort = 7734
            notificationPort = 7874
            return
        }
        let ports = parts[1].split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        guard ports.count == 2, let registration = ports[0], let notification = ports[1],
              (0...65535).contains(registration), (0...65535).contains(notification) else {
            throw GatewaySettingError("pushd_udp: expected HOST:REGISTRATION_PORT,NOTIFICATION_PORT (e.g. 127.0.0.1:7734,7874), got \"\(text)\"")
        }
        registrationPort = registration
        notificationPort = notification
    }

    /// Whether only this machine can send to the ports: pushd's protocol has no authentication,
    /// so anyone who reaches them can register devices and send notifications.
    public var isLoopback: Bool {
        let name = host.lowercased()
        return name == "localhost" || name.hasPrefix("127.") || name == "::1" || name == "[::1]"
    }

    public init(host: String, registrationPort: Int, notificationPort: Int) {
        self.host = host
        self.registrationPort = registrationPort
        self.notificationPort = notificationPort
    }
}

/// HOST:PORT as `--listen` takes it.
public struct ListenAddress: Sendable, Equatable {
    public var host: String
    public var port: Int

    public init(parsing text: String) throws(GatewaySettingError) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw GatewaySettingError("listen: expected HOST:PORT (e.g. 127.0.0.1:8080), got \"\(text)\"")
        }
        let host = String(text[..<colon])
        self.host = host.isEmpty ? "127.0.0.1" : host
        self.port = port
    }
}

public struct GatewaySettingError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
