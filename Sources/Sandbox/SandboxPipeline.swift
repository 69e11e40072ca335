import NIOCore
import NIOHTTP2
import NIOSSL

/// Builds one accepted connection's pipeline: abort hook, TLS, then HTTP/2 once ALPN chose h2.
enum SandboxPipeline {
    static func configure(
        _ channel: any Channel,
        tls: NIOSSLContext,
        settings: SandboxSettings,
        recorder: SandboxRecorder
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(SandboxAbortHandler())
            try operations.addHandler(NIOSSLServerHandler(context: tls))
        }.flatMap {
            channel.configureHTTP2SecureUpgrade(
                h2ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.configureHTTP2(channel, settings: settings, recorder: recorder)
                    }
                },
                // Only h2 is offered; a client without ALPN gets nothing, as from APNs.
                http1ChannelConfigurator: { channel in channel.close() }
            )
        }
    }

    private static func configureHTTP2(
        _ channel: any Channel,
        settings: SandboxSettings,
        recorder: SandboxRecorder
    ) throws {
        let operations = channel.pipeline.syncOperations
        let abortHandler = try operations.handler(type: SandboxAbortHandler.self)
        let identity: SandboxClientIdentity
        if let certificate = try operations.handler(type: NIOSSLServerHandler.self).peerCertificate {
            identity = SandboxClientCertificate.bundleID(of: certificate).map { .certificate(bundleID: $0) } ?? .unusableCertificate
        } else {
            identity = .none
        }
        let connection = SandboxConnectionHandler(
            id: recorder.connectionAccepted(), identity: identity, settings: settings,
            recorder: recorder, abortHandler: abortHandler
        )

        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        // The values observed from APNs (as seen from api.push.apple.com), with the stream limit APNs starts at.
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: connection.initialStreamLimit),
            HTTP2Setting(parameter: .headerTableSize, value: 4096),
            HTTP2Setting(parameter: .initialWindowSize, value: 65535),
            HTTP2Setting(parameter: .maxFrameSize, value: 16384),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 8000),
        ]
        // No stream multiplexer: frames of every stream go to the connection handler.
        try operations.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connectionConfiguration))
        try operations.addHandler(connection)
    }
}
