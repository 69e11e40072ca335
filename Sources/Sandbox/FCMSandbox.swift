import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// The sandbox's FCM mode: a local FCM HTTP v1 and Google OAuth token endpoint on one TLS port.
/// `POST /token` trades a service account's RS256 assertion (for the account it generated into
/// `fcmMaterial.serviceAccountFile`) for a bearer token; `POST /v1/projects/<project>/messages:send`
/// checks that bearer and the message as FCM does, records it, and answers `{"name":…}` or FCM's
/// error. Rules (by token) script FCM's errors, faults and `/_sandbox/…` control requests work as in
/// the APNs mode. HTTP/2 and, for the token endpoint's Python clients, HTTP/1.1.
public final class FCMSandbox: Sendable {
    private struct Running: Sendable {
        let group: MultiThreadedEventLoopGroup
        let channel: any Channel
        let credentials: FCMSandboxCredentials
        let tokenURI: String
    }

    private let configuration: SandboxConfiguration
    private let fcm: FCMSandboxConfiguration
    private let logger: Logger
    private let recorder: SandboxRecorder
    private let running = NIOLockedValueBox<Running?>(nil)

    /// The CA clients trust (`caCertificateFile`) and the server identity; the files exist once `start()` returned.
    public let material: SandboxGeneratedMaterial
    /// The generated service account's key file; written by `start()` with the bound port in its `token_uri`.
    public let fcmMaterial: FCMSandboxMaterial

    public init(configuration: SandboxConfiguration, fcm: FCMSandboxConfiguration = FCMSandboxConfiguration(), logger: Logger) {
        self.configuration = configuration
        self.fcm = fcm
        self.logger = logger
        self.recorder = SandboxRecorder(rules: configuration.rules, faults: configuration.faults, recordLimit: configuration.recordLimit)
        self.material = SandboxGeneratedMaterial(stateDirectory: configuration.stateDirectory)
        self.fcmMaterial = FCMSandboxMaterial(stateDirectory: configuration.stateDirectory)
    }

    /// Creates or reuses the generated material, binds, writes the service-account file, and
    /// returns the port actually bound.
    public func start() async throws -> Int {
        guard self.running.withLockedValue({ $0 == nil }) else { throw SandboxError(message: "already started") }
        let configuration = self.configuration
        try await self.material.createMissing(in: configuration.stateDirectory, logger: self.logger)
        let tls = try Self.makeTLSContext(
            certificateFile: configuration.certificateFile ?? self.material.serverCertificateFile,
            privateKeyFile: configuration.privateKeyFile ?? self.material.serverPrivateKeyFile
        )
        // The responder needs the port (the token_uri names it), the port needs the bound channel:
        // connections read the responder from here, set before any can arrive.
        let responderBox = NIOLockedValueBox<FCMSandboxResponder?>(nil)
        let recorder = self.recorder
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    guard let responder = responderBox.withLockedValue({ $0 }) else { return channel.close() }
                    return Self.configure(channel, tls: tls, responder: responder, recorder: recorder,
                                          maxConcurrentStreams: max(1, configuration.maxConcurrentStreams))
                }
                .bind(host: configuration.host, port: configuration.port)
                .get()
        } catch {
            try? await group.shutdownGracefully()
            throw SandboxError(message: "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        let port = channel.localAddress?.port ?? configuration.port
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let tokenURI = "https://\(host):\(port)/token"
        let credentials: FCMSandboxCredentials
        do {
            let publicKey = try self.fcmMaterial.write(configuration: self.fcm, tokenURI: tokenURI, logger: self.logger)
            credentials = FCMSandboxCredentials(clientEmail: self.fcm.clientEmail, keyID: FCMSandboxMaterial.privateKeyID, tokenURI: tokenURI,
                                                publicKey: publicKey, tokenLifetime: self.fcm.tokenLifetime)
        } catch {
            try? await channel.close()
            try? await group.shutdownGracefully()
            throw SandboxError(message: "cannot write the FCM service account: \(error)")
        }
        responderBox.withLockedValue {
            $0 = FCMSandboxResponder(projectID: self.fcm.projectID, tokenPath: "/token", credentials: credentials, recorder: recorder,
                                     retryAfterSeconds: self.fcm.retryAfterSeconds,
                                     clockOffsetSeconds: Int(self.fcm.clockOffset.components.seconds))
        }
        self.running.withLockedValue { $0 = Running(group: group, channel: channel, credentials: credentials, tokenURI: tokenURI) }
        self.logger.info("sandbox: FCM listening", metadata: [
            "address": "\(configuration.host):\(port)", "ca": "\(self.material.caCertificateFile)",
            "service_account": "\(self.fcmMaterial.serviceAccountFile)", "project": "\(self.fcm.projectID)",
        ])
        return port
    }

    /// The token endpoint's URL (nil before `start()`).
    public var tokenURI: String? { self.running.withLockedValue { $0?.tokenURI } }

    /// Every answered `messages:send` (all statuses), oldest first: `token` is the registration token
    /// (or `/topics/<name>`), `topic` the project, `apnsID` the message name, `priority` 10 (HIGH),
    /// 5 (NORMAL) or 0, `expiration` the android TTL in seconds, `payload` the request body,
    /// `providerToken` the bearer token.
    public func received() -> [ReceivedNotification] { self.recorder.received() }

    public func statistics() -> SandboxStatistics { self.recorder.statistics() }

    /// Rules match the registration token (`token`, `tokenPrefix`) and the project (`topic`); their
    /// `reason` is an FCM error code (UNREGISTERED, SENDER_ID_MISMATCH, QUOTA_EXCEEDED, UNAVAILABLE,
    /// INTERNAL, INVALID_ARGUMENT, THIRD_PARTY_AUTH_ERROR, UNSPECIFIED_ERROR) or UNAUTHENTICATED.
    public func setRules(_ rules: [SandboxRule]) { self.recorder.setRules(rules) }

    public func setFaults(_ faults: SandboxFaults) { self.recorder.setFaults(faults) }

    public func reset() { self.recorder.reset() }

    /// Every access token issued so far stops working (clients must fetch new ones).
    public func expireAccessTokens() { self.running.withLockedValue { $0?.credentials.expireAll() } }

    /// Revokes (or restores) the service account: its tokens are refused and the token endpoint
    /// answers invalid_grant.
    public func setServiceAccountRevoked(_ revoked: Bool) { self.running.withLockedValue { $0?.credentials.setRevoked(revoked) } }

    /// Access tokens the token endpoint issued since start.
    public var accessTokensIssued: Int { self.running.withLockedValue { $0?.credentials.tokensIssued } ?? 0 }

    /// Grants the token endpoint refused since start (an assertion it would not take, a revoked account).
    public var accessTokenGrantsRefused: Int { self.running.withLockedValue { $0?.credentials.grantsRefused } ?? 0 }

    public func stop() async {
        guard let running = self.running.withLockedValue({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return }
        try? await running.channel.close()
        try? await running.group.shutdownGracefully()
        self.logger.info("sandbox: FCM stopped")
    }

    /// TLS 1.2+, ALPN h2 or http/1.1 (FCM's clients speak HTTP/2, the token endpoint's Python ones HTTP/1.1).
    static func makeTLSContext(certificateFile: String, privateKeyFile: String) throws -> NIOSSLContext {
        do {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem))
            )
            configuration.minimumTLSVersion = .tlsv12
            configuration.applicationProtocols = ["h2", "http/1.1"]
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw SandboxError(message: "TLS setup with \(certificateFile): \(error)")
        }
    }

    private static func configure(_ channel: any Channel, tls: NIOSSLContext, responder: FCMSandboxResponder, recorder: SandboxRecorder,
                                  maxConcurrentStreams: Int) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(SandboxAbortHandler())
            try operations.addHandler(NIOSSLServerHandler(context: tls))
        }.flatMap {
            channel.configureHTTP2SecureUpgrade(
                h2ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let operations = channel.pipeline.syncOperations
                        var settings = NIOHTTP2Handler.ConnectionConfiguration()
                        // FCM's ~100 streams per connection are the sandbox's --max-concurrent-streams.
                        settings.initialSettings = [
                            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
                            HTTP2Setting(parameter: .initialWindowSize, value: 65535),
                            HTTP2Setting(parameter: .maxFrameSize, value: 16384),
                        ]
                        let abortHandler = try operations.handler(type: SandboxAbortHandler.self)
                        try operations.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: settings))
                        try operations.addHandler(FCMSandboxHTTP2Handler(id: recorder.connectionAccepted(), responder: responder, abortHandler: abortHandler))
                    }
                },
                http1ChannelConfigurator: { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMap {
                        channel.eventLoop.makeCompletedFuture {
                            let operations = channel.pipeline.syncOperations
                            let abortHandler = try operations.handler(type: SandboxAbortHandler.self)
                            try operations.addHandler(FCMSandboxHTTP1Handler(id: recorder.connectionAccepted(), responder: responder, abortHandler: abortHandler))
                        }
                    }
                }
            )
        }
    }
}
