import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import OwnerThread
import ServiceLifecycle
import Synchronization
import Worker

/// `--status-port`: a small HTTP/1.1 endpoint for people, orchestrators and Prometheus.
///   GET /status   the worker's status as JSON (credential problems, connections, counts, latency)
///   GET /readyz   200 "ok" while the worker can take jobs, 503 with the reason otherwise (RabbitMQ or
///                 Redis down, results unpublishable, consumption paused for the whole worker): for
///                 a readiness probe. One app's refused credentials or unreachable platform hold
///                 back that app only and leave it 200 (`/status` names them)
///   GET /healthz  the same as /readyz (its older name)
///   GET /livez    200 while the process's loops turn, 503 naming a loop that has run without
///                 coming back to its wait for longer than `livenessLimit`: for a liveness probe
///                 (a broker outage leaves it 200, so the orchestrator does not restart the pod)
///   GET /metrics  the Prometheus text format
/// Bounded: at most `maxConnections` at once (more are closed at once) and each is closed after
/// `idleTimeout` without a request, so a misbehaving client cannot hold the worker's memory or fds.
public struct StatusServer: Service {
    let host: String
    let port: Int
    let status: WorkerStatus
    let logger: Logger
    let maxConnections: Int
    let idleTimeout: TimeAmount
    let listening: @Sendable (_ port: Int) -> Void
    let metrics: (@Sendable () -> [UInt8])?
    let livenessLimit: Duration
    public static let defaultLivenessLimit: Duration = .seconds(30)

    /// - Parameter listening: told the bound port (useful with port 0).
    /// - Parameter metrics: the exposition `/metrics` answers (404 without).
    public init(host: String, port: Int, status: WorkerStatus, logger: Logger,
                maxConnections: Int = 32, idleTimeout: Duration = .seconds(10),
                listening: @escaping @Sendable (_ port: Int) -> Void = { _ in },
                metrics: (@Sendable () -> [UInt8])? = nil, livenessLimit: Duration = StatusServer.defaultLivenessLimit) {
        self.metrics = metrics
        self.livenessLimit = livenessLimit
        self.host = host
        self.port = port
        self.status = status
        self.logger = logger
        self.maxConnections = maxConnections
        self.idleTimeout = TimeAmount(idleTimeout)
        self.listening = listening
    }

    public func run() async throws {
        let status = self.status, metrics = self.metrics, livenessLimit = self.livenessLimit
        let idleTimeout = self.idleTimeout
        let open = ConnectionCount(limit: maxConnections)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(ChannelOptions.backlog, value: 16)
            .childChannelInitializer { channel in
                guard open.enter() else { return channel.close() }
                channel.closeFuture.whenComplete { _ in open.leave() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(StatusHTTPHandler(status: status, metrics: metrics, livenessLimit: livenessLimit))
                }
            }
            .bind(host: host, port: port).get()
        let boundPort = channel.localAddress?.port ?? port
        logger.info("status endpoint listening", metadata: ["address": "http://\(host):\(boundPort)/status"])
        listening(boundPort)
        try? await gracefulShutdown()
        try? await channel.close()
    }
}

private final class ConnectionCount: Sendable {
    private let count = Atomic(0)
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func enter() -> Bool {
        if count.add(1, ordering: .relaxed).newValue <= limit { return true }
        count.subtract(1, ordering: .relaxed)
        return false
    }

    func leave() { count.subtract(1, ordering: .relaxed) }
}

private final class StatusHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let status: WorkerStatus
    private let metrics: (@Sendable () -> [UInt8])?
    private let livenessLimit: Duration

    init(status: WorkerStatus, metrics: (@Sendable () -> [UInt8])?, livenessLimit: Duration) {
        self.status = status
        self.metrics = metrics
        self.livenessLimit = livenessLimit
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case let .head(request) = unwrapInboundIn(data) else { return }
        let (code, body): (HTTPResponseStatus, [UInt8])
        var contentType = "text/plain"
        switch (request.method, request.uri) {
        case (.GET, "/status"):
            (code, body) = (.ok, status.json())
            contentType = "application/json"
        case (.GET, "/readyz"), (.GET, "/healthz"):
            if let problem = status.readinessProblem {
                (code, body) = (.serviceUnavailable, Array((String(problem.prefix(500)) + "\n").utf8))
            } else {
                (code, body) = (.ok, Array("ok\n".utf8))
            }
        case (.GET, "/livez"):
            let stuck = LoopHeartbeat.stuck(longerThan: livenessLimit)
            if stuck.isEmpty {
                (code, body) = (.ok, Array("ok\n".utf8))
            } else {
                let names = stuck.map { "\($0.name) (running \($0.milliseconds / 1000) s without a wait)" }
                (code, body) = (.serviceUnavailable, Array(("stuck: " + names.joined(separator: ", ") + "\n").utf8))
            }
        case (.GET, "/metrics") where metrics != nil:
            (code, body) = (.ok, metrics?() ?? [])
            contentType = "text/plain; version=0.0.4; charset=utf-8"
        default:
            (code, body) = (.notFound, Array("GET /status, /readyz, /livez or /metrics\n".utf8))
        }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: contentType)
        headers.add(name: "content-length", value: String(body.count))
        // "connection: close" (or HTTP/1.0): the client waits for the close, not for the idle timeout.
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: code, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
