import Foundation
import Logging
import Sandbox
import ServiceLifecycle
import StatusEndpoint
import Synchronization
import Testing
@testable import WebPush
@testable import Worker
import HTTP2

/// Web Push subscriptions are written by browsers, so by anyone: what a hostile one can make a
/// worker do. Against RabbitMQ, Redis, the Web Push sandbox (which decrypts every message), a
/// second sandbox that refuses everything, and a TCP listener that counts the connections it sees.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct WebPushTrustTests {
    struct World {
        let fixture: PipelineFixture
        let sandbox: WebPushSandbox
        let key: VAPIDKey
        let worker: PushWorker
        let statusPort: Int
        let metrics: PrometheusExport

        /// `name{labels}` → value, from `/metrics`.
        func samples() throws -> [String: Double] {
            MetricsEndToEndTests.samples(try LoopbackHTTP.get(port: statusPort, path: "/metrics").body)
        }

        func readiness() throws -> Int { try LoopbackHTTP.get(port: statusPort, path: "/readyz").status }
    }

    /// A worker with Web Push apps made by `apps` (given the VAPID key and the sandboxes' CA), a
    /// status endpoint and metrics; the sandbox started.
    static func withWorker(credentialsRetryInterval: Duration = .milliseconds(500), sandboxOffersHTTP2: Bool = true,
                           apps: (VAPIDKey, String) throws -> [String: WebPushConfiguration],
                           _ body: (World) async throws -> Void) async throws {
        try await PipelineFixture.with { fixture in
            let sandbox = WebPushSandbox(stateDirectory: fixture.stateDirectory, offersHTTP2: sandboxOffersHTTP2, logger: fixture.logger)
            _ = try await sandbox.start()
            let key = try VAPIDKey.generate()
            var configuration = try fixture.workerConfiguration(requestTimeout: .seconds(30))
            configuration.apps.merge(try apps(key, fixture.sandbox.material.caCertificateFile)) { _, web in web }
            configuration.credentialsRetryInterval = credentialsRetryInterval
            let export = PrometheusExport()
            try fixture.startWorker(configuration, metrics: WorkerMetrics(factory: export.factory))
            let worker = try #require(fixture.worker)
            let (ports, portInput) = AsyncStream.makeStream(of: Int.self)
            let server = StatusServer(host: "127.0.0.1", port: 0, status: worker.status, logger: fixture.logger,
                                      listening: { portInput.yield($0) },
                                      metrics: { worker.sampleMetrics(); return export.exposition() })
            let group = ServiceGroup(services: [server], logger: fixture.logger)
            do {
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    var iterator = ports.makeAsyncIterator()
                    let port = try #require(await iterator.next())
                    let world = World(fixture: fixture, sandbox: sandbox, key: key, worker: worker, statusPort: port, metrics: export)
                    // Connected and consuming first: what follows is read against a ready worker.
                    try await waitUntil("the worker is ready") { try world.readiness() == 200 }
                    try await body(world)
                    await group.triggerGracefulShutdown()
                    tasks.cancelAll()
                }
            } catch {
                await sandbox.stop()
                throw error
            }
            await sandbox.stop()
        }
    }

    /// One app, "web", that may send to the sandbox: its CA trusted, its loopback address and
    /// its port allowed.
    static func sandboxApp(_ key: VAPIDKey, ca: String) throws -> [String: WebPushConfiguration] {
        ["web": try webPush(key, ca: ca) {
            $0.allowPrivateEndpoints = true
            $0.allowedEndpointPorts = nil
        }]
    }

    static func webPush(_ key: VAPIDKey, ca: String, configure: (inout WebPushConfiguration) -> Void) throws -> WebPushConfiguration {
        var web = WebPushConfiguration(vapidKey: key, subject: try VAPIDSubject("mailto:push@example.com"))
        web.extraCAFile = ca
        web.requestTimeout = .seconds(30)
        configure(&web)
        return web
    }

    /// A subscription's keys at another endpoint (the job's parser checks the keys, not where
    /// the endpoint points).
    static func moved(_ subscription: SandboxWebPushSubscription, to endpoint: String) -> String {
        "\(endpoint)#p256dh=\(subscription.p256dh)&auth=\(subscription.auth)"
    }

    /// Issue 41, finding 1: subscriptions at `https://127.0.0.1:<port>/x` (an address) and
    /// `https://localhost:<port>/x` (a name that resolves to one) make an app without the opt-in
    /// connect nowhere: each device ends with delivery.failed EndpointNotAllowed naming the host
    /// and the address class, and the listener at that port sees no connection. The app with the
    /// opt-in delivers to the sandbox (on 127.0.0.1 too), and, sent the same subscriptions,
    /// does reach the listener: the count above could have failed.
    @Test func privateEndpointsAreRefusedWithoutAConnection() async throws {
        let listener = try CountingListener()
        defer { listener.stop() }
        try await Self.withWorker(apps: { key, ca in
            [
                // Any port, so that the address rule is what refuses here.
                "web": try Self.webPush(key, ca: ca) { $0.allowedEndpointPorts = nil },
                "web-local": try Self.webPush(key, ca: ca) {
                    $0.allowPrivateEndpoints = true
                    $0.allowedEndpointPorts = nil
                },
            ]
        }) { world in
            let fixture = world.fixture
            let subscriptions = try world.sandbox.subscribe(count: 2)
            let hostile = [
                Self.moved(subscriptions[0], to: "https://127.0.0.1:\(listener.port)/x"),
                Self.moved(subscriptions[0], to: "https://localhost:\(listener.port)/x"),
                Self.moved(subscriptions[0], to: "https://[::ffff:127.0.0.1]:\(listener.port)/x"),
                Self.moved(subscriptions[0], to: "https://2130706433:\(listener.port)/x"),
            ]
            let tokens = hostile.map { "\"\($0)\"" }.joined(separator: ",")
            try await fixture.publish(#"{"id":"strict","app":"web","tokens":[\#(tokens)],"payload":{"n":1}}"#)
            try await fixture.publish(#"{"id":"local","app":"web-local","tokens":["\#(subscriptions[1].compact)"],"payload":{"n":2}}"#)
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" }.count >= 2
            }
            let failed = events.filter { $0.routingKey == "delivery.failed" && $0.string("app") == "web" }
            let failedTokens = Set(failed.compactMap { $0.string("token") })
            #expect(failedTokens == Set(hostile), "each hostile device ends, once")
            #expect(failed.count == hostile.count)
            for event in failed {
                let reason = event.string("reason") ?? ""
                #expect(reason.hasPrefix("EndpointNotAllowed: "), "\(reason)")
                #expect(reason.contains("loopback"), "names the address class: \(reason)")
            }
            let reasons = failed.compactMap { $0.string("reason") }
            let loopbackNamed = reasons.contains { $0.contains("127.0.0.1 is a loopback address") }
            #expect(loopbackNamed)
            let localhostNamed = reasons.contains { $0.contains("localhost resolves only to addresses that are not public") }
            #expect(localhostNamed)
            let decimalAddressNamed = reasons.contains { $0.contains("2130706433 resolves only to addresses that are not public") }
            #expect(decimalAddressNamed)
            let strictCompletion = events.first { $0.routingKey == "job.completed" && $0.string("job_id") == "strict" }
            let strict = try #require(strictCompletion)
            #expect(strict.int("failed") == hostile.count && strict.int("retried") == 0)
            #expect(listener.accepted == 0, "nothing connected to the listener")
            #expect(MixedFleetTests.plaintexts(world.sandbox)[subscriptions[1].id] == [#"{"n":2}"#], "the opt-in app delivers")

            // The control: the same subscriptions through the app with the opt-in reach the listener.
            try await fixture.publish(#"{"id":"control","app":"web-local","tokens":["\#(hostile[0])"],"payload":{"n":3}}"#)
            try await waitUntil("the listener sees the app with the opt-in connect") { listener.accepted >= 1 }
        }
    }

    /// The HTTP/1.1 path looks the host up itself (a service that spoke TLS without h2 at one
    /// address may resolve to another now) and checks what it got as the HTTP/2 pool does: to a
    /// name that resolves to loopback, an app without the opt-in opens no connection; with the
    /// opt-in the same origin is connected to, so the count could have failed.
    @Test func anHTTP1OriginChecksTheAddressItConnectsTo() async throws {
        let listener = try CountingListener()
        defer { listener.stop() }
        var configuration = WebPushConfiguration(vapidKey: try VAPIDKey.generate(), subject: try VAPIDSubject("mailto:push@example.com"))
        configuration.allowedEndpointPorts = nil
        configuration.connectTimeout = .seconds(5)
        configuration.requestTimeout = .seconds(5)
        let origin = try WebPushEndpointOrigin(endpoint: "https://localhost:\(listener.port)/x")
        func post(_ configuration: WebPushConfiguration) async -> Result<HTTP2Response, HTTP2Error> {
            let http1 = WebPushHTTP1Origin(origin: origin, configuration: configuration, logger: Logger(label: "test"))
            let result = await withCheckedContinuation { continuation in
                http1.send(path: "/x", headers: [], body: [1, 2, 3]) { continuation.resume(returning: $0) }
            }
            await http1.shutdown()
            return result
        }
        guard case .failure(let refused) = await post(configuration) else {
            Issue.record("a loopback origin was posted to without the opt-in")
            return
        }
        #expect(refused.code == .addressNotAllowed)
        #expect(refused.message.contains("localhost resolves only to addresses that are not public"), "\(refused.message)")
        #expect(listener.accepted == 0, "nothing connected to the listener")
        configuration.allowPrivateEndpoints = true
        guard case .failure(let lost) = await post(configuration) else {
            Issue.record("the listener answers nothing, yet the post succeeded")
            return
        }
        #expect(lost.code != .addressNotAllowed, "\(lost)")
        #expect(listener.accepted >= 1, "the opt-in connects")
    }

    /// Issue 41, finding 2: one subscription whose push service answers 403 to everything, in a
    /// group of 200 good ones. The app keeps sending (every good device delivered once, no pause
    /// of any kind), `/readyz` stays 200, and the hostile device ends with one delivery.failed
    /// after its attempts, never held back untouched.
    @Test func aServiceThatRefusesEverythingIsItsSubscriptionsOutcomeNotTheApps() async throws {
        try await Self.withWorker(apps: Self.sandboxApp) { world in
            let fixture = world.fixture
            let refusing = WebPushSandbox(stateDirectory: fixture.stateDirectory, logger: fixture.logger)
            _ = try await refusing.start()
            refusing.setRules([WebPushSandboxRule(status: 403, reason: "Forbidden")])
            let hostile = try #require(try refusing.subscribe(count: 1).first)
            let good = try world.sandbox.subscribe(count: 200)
            _ = try await fixture.redis.setAdd(key: "\(fixture.groupPrefix)web:readers", members: good.map(\.compact) + [hostile.compact])
            try await fixture.publish(#"{"id":"mixed","app":"web","groups":["readers"],"payload":{"title":"hello"}}"#)

            let ready = Mutex<[Int]>([])
            let events = try await fixture.events(timeout: .seconds(90)) { events in
                if let status = try? world.readiness() { ready.withLock { $0.append(status) } }
                return events.contains { ["delivery.failed", "token.invalid"].contains($0.routingKey) }
                    && events.filter { $0.routingKey == "job.completed" }.count >= 3
            }
            let terminal = events.filter { ["delivery.failed", "token.invalid"].contains($0.routingKey) }
            #expect(terminal.count == 1)
            let failed = try #require(terminal.first)
            #expect(failed.routingKey == "delivery.failed")
            #expect(failed.string("token") == hostile.compact)
            #expect(failed.int("status") == 403)
            #expect(failed.string("reason")?.hasPrefix("Forbidden") == true, "\(failed.string("reason") ?? "")")
            #expect(failed.int("attempts") == 3, "the ladder's attempts, then the end")

            let delivered = MixedFleetTests.plaintexts(world.sandbox)
            #expect(Set(delivered.keys) == Set(good.map(\.id)), "every good device")
            let eachDeliveredOnce = delivered.values.allSatisfy { $0 == [#"{"title":"hello"}"#] }
            #expect(eachDeliveredOnce, "each once")
            #expect(refusing.received().count == 3, "one request per attempt: nothing held it back to try again")
            let allRefused = refusing.received().allSatisfy { $0.status == 403 }
            #expect(allRefused)

            let worker = world.worker
            #expect(worker.status.snapshot.credentialProblems.isEmpty)
            #expect(worker.status.snapshot.pauses.isEmpty)
            let samples = try world.samples()
            for cause in ConsumptionState.PauseCause.allCases {
                #expect(samples[#"pushworker_pauses_total{cause="\#(cause.rawValue)"}"#] == 0, "never paused for \(cause)")
            }
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 0, "nothing waits to be tried again")
            let alwaysReady = ready.withLock { $0 }.allSatisfy { $0 == 200 }
            #expect(alwaysReady, "/readyz answered \(ready.withLock { $0 })")
            #expect(try world.readiness() == 200)
            await refusing.stop()
        }
    }
}
