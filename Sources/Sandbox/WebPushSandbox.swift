import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A local Web Push service: subscriptions it makes (as a browser would), messages it checks
/// (VAPID, headers), **decrypts** with the subscription's private key and records, scripted
/// refusals, and revocable VAPID keys. HTTP/2 and HTTP/1.1 over TLS on one port, so that the
/// worker (h2) and Python's pywebpush (HTTP/1.1) both reach it. Trust `material.caCertificateFile`.
public final class WebPushSandbox: Sendable {
    private struct Running: Sendable {
        let group: MultiThreadedEventLoopGroup
        let channel: any Channel
        let exchange: WebPushSandboxExchange
    }

    public let material: SandboxGeneratedMaterial
    private let stateDirectory: String
    private let host: String
    private let port: Int
    private let maxTTL: Int
    private let logsMessages: Bool
    private let offersHTTP2: Bool
    private let logger: Logger
    private let subscriptions = WebPushSandboxSubscriptions()
    private let state: WebPushSandboxState
    private let running = NIOLockedValueBox<Running?>(nil)

    /// - Parameters:
    ///   - stateDirectory: where the CA and server certificate are (made if missing), shared with an
    ///     APNs sandbox in the same directory.
    ///   - maxTTL: the longest TTL kept; a longer one is shortened and the kept one echoed.
    ///   - offersHTTP2: false plays a push service that speaks only HTTP/1.1.
    public init(host: String = "127.0.0.1", port: Int = 0, stateDirectory: String, maxTTL: Int = 30 * 86_400,
                recordLimit: Int = 1_000_000, logsMessages: Bool = false, offersHTTP2: Bool = true, logger: Logger) {
        self.host = host
        self.port = port
        self.maxTTL = maxTTL
        self.logsMessages = logsMessages
        self.offersHTTP2 = offersHTTP2
        self.logger = logger
        self.state = WebPushSandboxState(recordLimit: recordLimit)
        self.stateDirectory = stateDirectory
        self.material = SandboxGeneratedMaterial(stateDirectory: stateDirectory)
    }

    /// Binds and returns the port; endpoints are `https://<host>:<port>/wp/<id>`.
    public func start() async throws -> Int {
        guard running.withLockedValue({ $0 == nil }) else { throw SandboxError(message: "already started") }
        try await material.createMissing(in: stateDirectory, logger: logger)
        let tls = try SandboxTLS.makeContext(certificateFile: material.serverCertificateFile, privateKeyFile: material.serverPrivateKeyFile,
                                             clientCAFile: material.caCertificateFile,
                                             protocols: offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The origin is known once bound; connections are accepted only after, so they read it then.
        let origin = NIOLockedValueBox("")
        let subscriptions = subscriptions, state = state, maxTTL = maxTTL, logsMessages = logsMessages
        let vapid = SandboxVAPIDCache()
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    let exchange = WebPushSandboxExchange(subscriptions: subscriptions, state: state, vapid: vapid,
                                                          origin: origin.withLockedValue { $0 }, maxTTL: maxTTL, logsMessages: logsMessages)
                    return Self.configure(channel, tls: tls, exchange: exchange)
                }
                .bind(host: host, port: port)
                .get()
        } catch {
            try? await group.shutdownGracefully()
            throw SandboxError(message: "cannot listen on \(host):\(port): \(error)")
        }
        let bound = channel.localAddress?.port ?? port
        let name = host.contains(":") ? "[\(host)]" : host
        origin.withLockedValue { $0 = "https://\(name):\(bound)" }
        let exchange = WebPushSandboxExchange(subscriptions: subscriptions, state: state, vapid: vapid, origin: "https://\(name):\(bound)", maxTTL: maxTTL)
        running.withLockedValue { $0 = Running(group: group, channel: channel, exchange: exchange) }
        logger.info("web push sandbox: listening", metadata: ["address": "\(host):\(bound)", "ca": "\(material.caCertificateFile)"])
        return bound
    }

    private static func configure(_ channel: any Channel, tls: NIOSSLContext, exchange: WebPushSandboxExchange) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
        }.flatMap {
            channel.configureHTTP2SecureUpgrade(
                h2ChannelConfigurator: { channel in
                    channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(),
                                WebPushSandboxHandler(exchange: exchange, httpVersion: "HTTP/2"),
                            ])
                        }
                    }.map { _ in }
                },
                http1ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(WebPushSandboxHandler(exchange: exchange, httpVersion: "HTTP/1.1"))
                    }
                }
            )
        }
    }

    /// New subscriptions, as browsers would make them; with `applicationServerKey` (the VAPID
    /// public key, 65 bytes) only messages signed with that key are accepted.
    public func subscribe(count: Int, applicationServerKey: [UInt8]? = nil) throws -> [SandboxWebPushSubscription] {
        guard let exchange = running.withLockedValue({ $0?.exchange }) else { throw SandboxError(message: "not started") }
        return subscriptions.make(count: count, origin: exchange.origin, applicationServerKey: applicationServerKey)
    }

    /// The browser unsubscribed: its endpoint answers 410 Gone from now on.
    public func unsubscribe(_ id: String) { subscriptions.unsubscribe(id) }

    public func received() -> [ReceivedWebPush] { state.received }

    public func setRules(_ rules: [WebPushSandboxRule]) { state.setRules(rules) }

    /// Messages signed with this VAPID public key are refused (403) from now on.
    public func revoke(vapidPublicKey: [UInt8]) { state.revoke(vapidPublicKey) }

    /// Accepts the key again.
    public func reinstate(vapidPublicKey: [UInt8]) { state.reinstate(vapidPublicKey) }

    public func reset() { state.reset() }

    public func stop() async {
        guard let running = running.withLockedValue({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return }
        try? await running.channel.close()
        try? await running.group.shutdownGracefully()
    }
}
