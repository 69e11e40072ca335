import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PushCore
import Redis
import ServiceLifecycle
import UnixSignals

/// `pushworker gateway`: jobs and group changes over HTTP, checked by the worker's own parser,
/// published to the job queue with publisher confirms; answered only once the broker confirmed.
public final class Gateway: Sendable {
    /// As started: the listen address, connections, queue and pushd's ports, which a reload does
    /// not change. What it may change is in `configuration`.
    let settings: GatewaySettings
    let logger: Logger
    let clock: GatewayClock
    let publisher: JobPublisher
    let redis: RedisClient
    let counters = GatewayCounters()
    let redisHealth = CachedCheck(maxAge: .seconds(1))
    /// Replaced whole by a reload (`Gateway+Reload`).
    let current: NIOLockedValueBox<GatewayConfiguration>

    /// - Parameter clock: what the API keys' and the relay's token buckets are driven by.
    public init(settings: GatewaySettings, logger: Logger, clock: GatewayClock = .continuous()) {
        self.settings = settings
        self.logger = logger
        self.clock = clock
        publisher = JobPublisher(configuration: settings.amqp, queue: settings.jobQueue, queueType: settings.queueType,
                                 timeout: settings.publishTimeout, logger: logger)
        redis = RedisClient(configuration: settings.redis, logger: logger)
        current = NIOLockedValueBox(GatewayConfiguration(settings: settings, redis: redis, now: clock.now()))
    }

    /// The configuration in force; a request reads it once and keeps it to the end.
    var configuration: GatewayConfiguration { current.withLockedValue { $0 } }

    /// Serves until SIGTERM or SIGINT, then finishes the requests in progress and closes.
    /// `onListening` gets the HTTP port (the chosen one when the settings ask for 0); `services`
    /// run alongside until then (the SIGHUP reloader).
    public func run(services extra: [any Service] = [], onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        publisher.start()
        let router = Router(context: GatewayRequestContext.self)
        addRoutes(to: router)
        var services = [ServiceGroupConfiguration.ServiceConfiguration]()
        if let pushd = settings.pushd {
            services.append(.init(service: PushdListener(endpoints: pushd, logger: logger, handle: { port, bytes in await self.handlePushd(port, bytes) })))
        }
        // They run until the graceful shutdown; their end must not end the gateway.
        services += extra.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .ignore) }
        let (seconds, attoseconds) = settings.idleTimeout.components
        let idle = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: idle)),
            configuration: ApplicationConfiguration(address: .hostname(settings.host, port: settings.port), serverName: "pushworker"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)] + services,
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            await publisher.shutdown()
            throw error
        }
        await publisher.shutdown()
    }

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/jobs") { request, _ in await self.respond { () throws(GatewayAnswer) in try await self.postJob(request) } }
        router.post("/v1/groups/:app/:group") { request, context in
            await self.respond { () throws(GatewayAnswer) in try await self.changeGroup(request, context: context, adding: true) }
        }
        router.delete("/v1/groups/:app/:group") { request, context in
            await self.respond { () throws(GatewayAnswer) in try await self.changeGroup(request, context: context, adding: false) }
        }
        router.post("/v1/channels/:app") { request, context in
            await self.respond { () throws(GatewayAnswer) in try await self.channelOperation(request, context: context, deleting: false) }
        }
        router.delete("/v1/channels/:app/:channel") { request, context in
            await self.respond { () throws(GatewayAnswer) in try await self.channelOperation(request, context: context, deleting: true) }
        }
        router.get("/healthz") { _, _ in await self.health().response }
        // Always routed: a reload may turn the relay on or off.
        router.post("/relay-to/**") { request, context in
            await self.respond { () throws(GatewayAnswer) in try await self.relay(request, context: context) }
        }
    }

    func respond(_ handle: () async throws(GatewayAnswer) -> GatewayAnswer) async -> Response {
        do { return try await handle().response } catch { return error.response }
    }

    // MARK: - Jobs and groups

    /// The key a request presents, its rate checked: 401 without one, 429 over its rate.
    func authorize(_ request: Request, in configuration: GatewayConfiguration) throws(GatewayAnswer) -> APIKeyring.Key {
        let keyring = configuration.keyring
        guard !keyring.isEmpty else { throw GatewayAnswer.noKeysConfigured }
        guard let key = keyring.key(authorization: request.headers[.authorization]) else { throw GatewayAnswer.unauthorized }
        if case let .refused(seconds) = keyring.take(for: key, now: clock.now()) { throw GatewayAnswer.rateLimited(retryAfter: seconds, key: key.name) }
        return key
    }

    func body(of request: Request, limit: Int) async throws(GatewayAnswer) -> [UInt8] {
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw GatewayAnswer.error(413, "the body is larger than \(limit) bytes (gateway.max_body_bytes)")
        } catch {
            throw GatewayAnswer.error(400, "the body could not be read: \(error)")
        }
    }

    func postJob(_ request: Request) async throws(GatewayAnswer) -> GatewayAnswer {
        let configuration = self.configuration
        let key = try authorize(request, in: configuration)
        let body = try await body(of: request, limit: configuration.settings.maxBodyBytes)
        let accepted: JobIntake.Accepted
        do { accepted = try configuration.jobs.check(body, key: key) } catch {
            counters.add { $0.jobsRefused += 1 }
            throw error
        }
        do { try await publisher.publish(body: body, id: accepted.id) } catch {
            counters.add { $0.publishFailures += 1 }
            logger.warning("gateway: job not published", metadata: ["job_id": "\(accepted.id)", "error": "\(error.message)"])
            throw error
        }
        counters.add { $0.jobsAccepted += 1 }
        return .json(202) { writer in
            writer.field("id", accepted.id)
            writer.field("app", accepted.app)
            writer.field("queue", settings.jobQueue)
        }
    }

    func changeGroup(_ request: Request, context: GatewayRequestContext, adding: Bool) async throws(GatewayAnswer) -> GatewayAnswer {
        let configuration = self.configuration
        let key = try authorize(request, in: configuration)
        let app = context.parameters.get("app") ?? ""
        let group = context.parameters.get("group") ?? ""
        let apps = configuration.settings.apps
        guard let platform = apps[app] else {
            throw GatewayAnswer.error(404, "unknown app \"\(app)\" (this gateway knows: \(apps.keys.sorted().joined(separator: ", ")))")
        }
        guard key.allows(app: app) else { throw GatewayAnswer.error(403, "API key \(key.name) may not manage this app's groups") }
        let groups = configuration.groups
        let setKey = try groups.key(app: app, group: group)
        let devices = try groups.devices(in: try await body(of: request, limit: configuration.settings.maxBodyBytes), app: app)
        let changed = adding ? try await groups.add(devices, to: setKey) : try await groups.remove(devices, from: setKey, platform: platform)
        counters.add { $0.groupChanges += 1 }
        return .json(200) { writer in
            writer.field(adding ? "added" : "removed", changed)
            writer.field("group", group)
            writer.field("app", app)
        }
    }

    /// A channel operation published as a job (`ChannelIntake`): 202 once the broker confirmed it.
    func channelOperation(_ request: Request, context: GatewayRequestContext, deleting: Bool) async throws(GatewayAnswer) -> GatewayAnswer {
        let configuration = self.configuration
        let key = try authorize(request, in: configuration)
        let app = context.parameters.get("app") ?? ""
        let apps = configuration.settings.apps
        guard let platform = apps[app] else {
            throw GatewayAnswer.error(404, "unknown app \"\(app)\" (this gateway knows: \(apps.keys.sorted().joined(separator: ", ")))")
        }
        guard key.allows(app: app) else { throw GatewayAnswer.error(403, "API key \(key.name) may not manage this app's channels") }
        guard platform == .apns else {
            throw GatewayAnswer.error(400, "app \"\(app)\" is a \(platform.rawValue) app; broadcast channels are APNs'", field: "app")
        }
        let id = ChannelIntake.newID()
        let job = deleting
            ? try ChannelIntake.delete(app: app, channel: context.parameters.get("channel") ?? "", id: id)
            : try ChannelIntake.create(app: app, body: try await body(of: request, limit: configuration.settings.maxBodyBytes), id: id)
        do throws(GatewayAnswer) { try await publisher.publish(body: job, id: id) } catch {
            counters.add { $0.publishFailures += 1 }
            throw error
        }
        counters.add { $0.jobsAccepted += 1 }
        return .json(202) { writer in
            writer.field("id", id)
            writer.field("app", app)
            writer.field("channel_op", deleting ? "delete" : "create")
            writer.field("queue", settings.jobQueue)
        }
    }

    // MARK: - Health

    func health() async -> GatewayAnswer {
        let amqp = publisher.isConnected
        let redisProblem = await redisHealth.check { () async -> String? in
            do throws(RedisError) { try await self.redis.ping() } catch { return error.message }
            return nil
        }
        let ready = amqp && redisProblem == nil
        var counts = JSONWriter()
        counters.snapshot.write(to: &counts)
        return .json(ready ? 200 : 503) { writer in
            writer.field("status", ready ? "ok" : "unavailable")
            writer.field("amqp", amqp ? "connected" : "not connected")
            writer.field("redis", redisProblem.map { "error: \($0)" } ?? "ok")
            writer.rawField("counts", String(decoding: counts.finish(), as: UTF8.self))
        }
    }
}

extension GatewayAnswer {
    var response: Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(status: HTTPResponse.Status(code: status), headers: fields,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    var message: String {
        String(decoding: body, as: UTF8.self)
    }
}
