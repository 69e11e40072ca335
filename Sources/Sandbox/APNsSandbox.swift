import Logging
import NIOCore
import NIOPosix
import NIOConcurrencyHelpers

/// A local APNs: HTTP/2 over TLS on one port, answering `POST /3/device/<token>` with APNs'
/// statuses and reasons, token and certificate authentication, scripted rules and faults, and a
/// record of everything it answered. Start it, point a client at it trusting `material.caCertificateFile`.
public final class APNsSandbox: Sendable {
    private struct Running: Sendable {
        let group: MultiThreadedEventLoopGroup
        let channel: any Channel
    }

    private let configuration: SandboxConfiguration
    private let logger: Logger
    private let recorder: SandboxRecorder
    private let running = NIOLockedValueBox<Running?>(nil)

    /// Paths are known up front; the files exist once `start()` returned.
    public let material: SandboxGeneratedMaterial

    public init(configuration: SandboxConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.recorder = SandboxRecorder(
            rules: configuration.rules, faults: configuration.faults, recordLimit: configuration.recordLimit
        )
        self.material = SandboxGeneratedMaterial(stateDirectory: configuration.stateDirectory)
    }

    /// Creates or reuses the generated material, binds, and returns the port actually bound.
    public func start() async throws -> Int {
        guard self.running.withLockedValue({ $0 == nil }) else { throw SandboxError(message: "already started") }
        let configuration = self.configuration
        try await self.material.createMissing(in: configuration.stateDirectory, logger: self.logger)

        let settings = SandboxSettings(
            validator: SandboxRequestValidator(
                keyring: try SandboxKeyring(self.tokenKeys()),
                allowedBundleIDs: Set(configuration.allowedTopics)
            ),
            maxConcurrentStreams: max(1, configuration.maxConcurrentStreams),
            providerTokenMinimumUpdateInterval: configuration.providerTokenMinimumUpdateInterval,
            logNotifications: configuration.logNotifications,
            logger: self.logger
        )
        let tls = try SandboxTLS.makeContext(
            certificateFile: configuration.certificateFile ?? self.material.serverCertificateFile,
            privateKeyFile: configuration.privateKeyFile ?? self.material.serverPrivateKeyFile,
            clientCAFile: self.material.caCertificateFile
        )

        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        let recorder = self.recorder
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    SandboxPipeline.configure(channel, tls: tls, settings: settings, recorder: recorder)
                }
                .bind(host: configuration.host, port: configuration.port)
                .get()
        } catch {
            try? await group.shutdownGracefully()
            throw SandboxError(message: "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        self.running.withLockedValue { $0 = Running(group: group, channel: channel) }
        let port = channel.localAddress?.port ?? configuration.port
        self.logger.info("sandbox: listening", metadata: [
            "address": "\(configuration.host):\(port)", "ca": "\(self.material.caCertificateFile)",
        ])
        return port
    }

    /// Every answered request (all statuses), oldest first, up to `recordLimit`.
    public func received() -> [ReceivedNotification] {
        self.recorder.received()
    }

    public func statistics() -> SandboxStatistics {
        self.recorder.statistics()
    }

    /// Replaces the rules and restarts their `times` counters.
    public func setRules(_ rules: [SandboxRule]) {
        self.recorder.setRules(rules)
    }

    /// Applies to requests from now on; the N-th request is still counted per connection.
    public func setFaults(_ faults: SandboxFaults) {
        self.recorder.setFaults(faults)
    }

    /// Clears the record, counters and rule counters.
    public func reset() {
        self.recorder.reset()
    }

    /// Closes the listener and every connection.
    public func stop() async {
        guard let running = self.running.withLockedValue({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return }
        try? await running.channel.close()
        try? await running.group.shutdownGracefully()
        self.logger.info("sandbox: stopped")
    }

    /// The configured keys, or the generated `.p8` under the generated key and team IDs.
    private func tokenKeys() throws -> [SandboxTokenKey] {
        guard self.configuration.tokenKeys.isEmpty else { return self.configuration.tokenKeys }
        let pem = try SandboxTLS.readFile(self.material.tokenKeyFile)
        return [SandboxTokenKey(keyID: self.material.tokenKeyID, teamID: self.material.teamID, publicKeyPEM: pem)]
    }
}
