import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// pushd's two UDP sockets: each datagram is one JSON message, handed to `handle` in the order
/// it arrived. UDP may drop packets under load, as it did for pushd; nothing here acknowledges.
struct PushdListener: Service {
    enum Port: String, Sendable { case registration, notification }

    let endpoints: PushdEndpoints
    let logger: Logger
    let handle: @Sendable (Port, [UInt8]) async -> Void

    func run() async throws {
        let registration = try await bind(port: endpoints.registrationPort)
        let notification: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>
        do { notification = try await bind(port: endpoints.notificationPort) } catch {
            try? await registration.channel.close()
            throw error
        }
        logger.info("pushd UDP listening", metadata: [
            "registration": "\(endpoints.host):\(registration.channel.localAddress?.port ?? 0)",
            "notification": "\(endpoints.host):\(notification.channel.localAddress?.port ?? 0)",
        ])
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await serve(registration, as: .registration) }
                    group.addTask { try await serve(notification, as: .notification) }
                    try await group.waitForAll()
                }
            }
        } catch is CancellationError {
            // The graceful shutdown ended the reads: a clean stop, not a failure.
        }
    }

    private func bind(port: Int) async throws -> NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>> {
        do {
            return try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                // pushd raised its receive buffer for bursts; a larger one drops fewer packets
                // while a publish waits for its confirm.
                .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
                // One datagram is at most 65,507 bytes: read each whole.
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                .bind(host: endpoints.host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw GatewaySettingError("pushd UDP: cannot listen on \(endpoints.host):\(port): \(error)")
        }
    }

    private func serve(_ channel: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>, as port: Port) async throws {
        try await channel.executeThenClose { inbound, _ in
            for try await envelope in inbound {
                await handle(port, Array(envelope.data.readableBytesView))
            }
        }
    }
}
