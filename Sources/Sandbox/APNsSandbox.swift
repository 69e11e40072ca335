import Logging
import NIOCore
import NIOPosix
import NIOConcurrencyHelpers
import NIOSSL

/// A local APNs: HTTP/2 over TLS on one port, answering `POST /3/device/<token>` and broadcasts
/// (`POST /4/broadcasts/apps/<bundle ID>`) with APNs' statuses and reasons, token and certificate
/// authentication, scripted rules and faults, and a record of everything it answered; and, once
/// `startChannelManagement` ran, APNs' channel-management API on a second port. Start it, point a
/// client at it trusting `material.caCertificateFile`.
public final class APNsSandbox: Sendable {
    private struct Running: Sendable {
        let group: MultiThreadedEventLoopGroup
        let channel: any Channel
        /// What the channel-management listener is started with: the push listener's TLS and checks.
        let tls: NIOSSLContext
        let settings: SandboxSettings
        var channelManagement: (any Channel)?
    }

    private let configuration: SandboxConfiguration
    private let logger: Logger
    private let recorder: SandboxRecorder
    /// Shared by both listeners: channels are created on one and broadcast to on the other.
    private let channelStore = SandboxChannels()
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

        let keyring = try SandboxKeyring(self.tokenKeys())
        let allowedBundleIDs = Set(configuration.allowedTopics)
        let settings = SandboxSettings(
            validator: SandboxRequestValidator(keyring: keyring, allowedBundleIDs: allowedBundleIDs),
            broadcastValidator: SandboxBroadcastValidator(keyring: keyring, allowedBundleIDs: allowedBundleIDs, channels: self.channelStore),
            channelManagement: SandboxChannelManagement(keyring: keyring, allowedBundleIDs: allowedBundleIDs, channels: self.channelStore),
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
        self.running.withLockedValue { $0 = Running(group: group, channel: channel, tls: tls, settings: settings) }
        let port = channel.localAddress?.port ?? configuration.port
        self.logger.info("sandbox: listening", metadata: [
            "address": "\(configuration.host):\(port)", "ca": "\(self.material.caCertificateFile)",
        ])
        return port
    }

    /// Starts APNs' channel-management API (api-manage-broadcast.push.apple.com) on its own port,
    /// with the push listener's TLS identity and authentication; returns the port actually bound.
    /// Call it after `start()`; `stop()` closes it too.
    public func startChannelManagement(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        guard let running = self.running.withLockedValue({ $0 }) else { throw SandboxError(message: "start() the sandbox first") }
        guard running.channelManagement == nil else { throw SandboxError(message: "channel management already started") }
        var managementSettings = running.settings
        managementSettings.role = .channelManagement
        let settings = managementSettings
        let tls = running.tls
        let recorder = self.recorder
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: running.group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    SandboxPipeline.configure(channel, tls: tls, settings: settings, recorder: recorder)
                }
                .bind(host: host, port: port)
                .get()
        } catch {
            throw SandboxError(message: "cannot listen on \(host):\(port): \(error)")
        }
        // stop() or a second call may have come in while binding: keep the listener only if this
        // very sandbox run is still up and has none yet.
        let kept = self.running.withLockedValue { state -> Bool in
            guard state?.channel === running.channel, state?.channelManagement == nil else { return false }
            state?.channelManagement = channel
            return true
        }
        guard kept else {
            try? await channel.close()
            throw SandboxError(message: "channel management: the sandbox stopped or it was started twice")
        }
        let bound = channel.localAddress?.port ?? port
        self.logger.info("sandbox: channel management listening", metadata: ["address": "\(host):\(bound)"])
        return bound
    }

    /// The broadcast channels of an app: channel ID → message storage policy (0 or 1).
    public func channels(bundleID: String) -> [String: Int] {
        self.channelStore.channels(bundleID: bundleID)
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
        try? await running.channelManagement?.close()
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
