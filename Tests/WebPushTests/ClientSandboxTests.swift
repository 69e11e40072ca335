import Foundation
import HTTP2
import Logging
import PushCore
import PushTransport
import PythonPeer
import Sandbox
import Testing
import WebPush
import WebPushCore

/// The worker's Web Push client against the sandbox's push service over real TLS and HTTP/2: the
/// sandbox checks the VAPID token, decrypts the body with the subscription's private key and
/// records the plaintext and headers.
@Suite struct ClientSandboxTests {
    final class Fixture: Sendable {
        let sandbox: WebPushSandbox
        let client: WebPushClient
        let key: VAPIDKey
        let directory: String

        /// - Parameter trustSandbox: count the sandbox as a trusted push service (`WebPushRefusalJudge`).
        /// - Parameter sandboxMaxTTL: the longest TTL the sandbox keeps (it echoes a shorter one it kept).
        init(trustSandbox: Bool = false, sandboxMaxTTL: Int = 30 * 86_400,
             configure: (inout WebPushConfiguration) -> Void = { _ in }) async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("webpush-sandbox-\(UUID().uuidString)").path
            let logger = Logger(label: "test")
            sandbox = WebPushSandbox(stateDirectory: directory, maxTTL: sandboxMaxTTL, logger: logger)
            let port = try await sandbox.start()
            key = try VAPIDKey.generate()
            var configuration = WebPushConfiguration(vapidKey: key, subject: try VAPIDSubject("mailto:push@example.com"))
            configuration.extraCAFile = sandbox.material.caCertificateFile
            // The sandbox is on 127.0.0.1, on a port of its own.
            configuration.allowPrivateEndpoints = true
            configuration.allowedEndpointPorts = nil
            if trustSandbox { configuration.trustedPushServices = [WebPushServiceName("127.0.0.1:\(port)")!] }
            configure(&configuration)
            client = WebPushClient(configuration: configuration, logger: logger)
        }

        func job(_ payload: String, options: WebPushJobOptions = WebPushJobOptions(), expiration: Int = 0) -> PushJob {
            PushJob(id: "job-1", app: "web", tokens: [], groups: [], sourceGroups: [], bulk: false, expiration: expiration,
                    options: options, payload: Array(payload.utf8), attempts: 0, chunk: nil)
        }

        func send(_ job: PushJob, to subscription: SandboxWebPushSubscription) async -> PushResult {
            let device = try! WebPushJobRules().device(from: .string(subscription.compact))
            return await withCheckedContinuation { continuation in
                client.send(job, to: device, requestID: "unused") { continuation.resume(returning: $0) }
            }
        }

        func close() async {
            await client.shutdown()
            await sandbox.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// A service that keeps the message for less than asked says so in its `TTL` answer (RFC 8030
    /// §5.2), and the result carries it; one that keeps it as long as asked adds nothing.
    @Test func aShortenedTTLIsReadBack() async throws {
        let fixture = try await Fixture(sandboxMaxTTL: 60)
        let subscription = try #require(try fixture.sandbox.subscribe(count: 1).first)
        let now = UnixTime.now().seconds
        let shortened = await fixture.send(fixture.job("{}", expiration: now + 3600), to: subscription)
        #expect(shortened.outcome == .sent)
        #expect(shortened.grantedTTL == 60)
        let kept = await fixture.send(fixture.job("{}", expiration: now + 30), to: subscription)
        #expect(kept.outcome == .sent)
        #expect(kept.grantedTTL == nil)
        #expect(fixture.sandbox.received().map(\.ttl) == [60, 30] || fixture.sandbox.received().map(\.ttl) == [60, 29])
        await fixture.close()
    }

    @Test func aMessageArrivesDecryptedWithItsHeaders() async throws {
        let fixture = try await Fixture()
        let subscription = try #require(try fixture.sandbox.subscribe(count: 1, applicationServerKey: fixture.key.publicKey).first)
        let now = UnixTime.now().seconds
        let result = await fixture.send(fixture.job(#"{"title":"Hello","body":"from the worker"}"#,
                                                    options: WebPushJobOptions(priority: 10, topic: "news-1"), expiration: now + 3600),
                                        to: subscription)
        #expect(result.outcome == .sent)
        #expect(result.status == 201)
        #expect(result.requestID?.hasPrefix("https://127.0.0.1:") == true, "the message's Location is its id")
        let received = try #require(fixture.sandbox.received().first)
        #expect(String(decoding: received.plaintext, as: UTF8.self) == #"{"title":"Hello","body":"from the worker"}"#)
        #expect(received.urgency == "high")
        #expect(received.topic == "news-1")
        #expect(received.ttl.map { (3590...3600).contains($0) } == true)
        #expect(received.subject == "mailto:push@example.com")
        #expect(received.vapidKey == fixture.key.publicKeyBase64URL)
        #expect(received.httpVersion == "HTTP/2")
        await fixture.close()
    }

    @Test func withoutExpirationTheTTLIsZero() async throws {
        let fixture = try await Fixture()
        let subscription = try #require(try fixture.sandbox.subscribe(count: 1).first)
        #expect(await fixture.send(fixture.job(#"{"a":1}"#), to: subscription).outcome == .sent)
        #expect(fixture.sandbox.received().first?.ttl == 0)
        #expect(fixture.sandbox.received().first?.urgency == nil)
        await fixture.close()
    }

    @Test func anUnsubscribedOrUnknownSubscriptionIsInvalid() async throws {
        let fixture = try await Fixture()
        let subscriptions = try fixture.sandbox.subscribe(count: 2)
        fixture.sandbox.unsubscribe(subscriptions[0].id)
        let gone = await fixture.send(fixture.job("{}"), to: subscriptions[0])
        #expect(gone.status == 410)
        #expect(gone.outcome == .tokenInvalid(reason: "Gone"))
        // Another id on the same service: 404, which FCM's web endpoints answer for stale ones.
        let unknown = SandboxWebPushSubscriptionCopy.withID("nobody", of: subscriptions[1])
        let notFound = await withCheckedContinuation { continuation in
            fixture.client.send(fixture.job("{}"), to: DeviceToken(identity: unknown.endpoint, given: unknown.compact), requestID: "x") {
                continuation.resume(returning: $0)
            }
        }
        #expect(notFound.status == 404)
        #expect(notFound.outcome == .tokenInvalid(reason: "NotFound"))
        await fixture.close()
    }

    @Test func aThrottledMessageIsRetriedAfterWhatTheServiceAsked() async throws {
        let fixture = try await Fixture()
        let subscription = try #require(try fixture.sandbox.subscribe(count: 1).first)
        fixture.sandbox.setRules([WebPushSandboxRule(status: 429, reason: "Slow down", retryAfterSeconds: 120, times: 1)])
        let throttled = await fixture.send(fixture.job("{}"), to: subscription)
        #expect(throttled.status == 429)
        #expect(throttled.outcome == .retryable(reason: "Slow down"))
        #expect(throttled.retryAfter == .seconds(120))
        #expect(await fixture.send(fixture.job("{}"), to: subscription).outcome == .sent, "the rule was for one request")
        await fixture.close()
    }

    /// A subscription made with another key: where this app's messages are accepted, the
    /// subscription is gone for good (token.invalid); where nothing was accepted yet, the key may
    /// be at fault, so the device retries rather than being given up.
    @Test func aSubscriptionMadeWithAnotherKeyIsInvalidWhereTheKeyWorks() async throws {
        let fixture = try await Fixture()
        let other = try VAPIDKey.generate()
        let restricted = try fixture.sandbox.subscribe(count: 2, applicationServerKey: other.publicKey)
        let unconfirmed = await fixture.send(fixture.job("{}"), to: restricted[0])
        #expect(unconfirmed.status == 401)
        guard case let .retryable(why) = unconfirmed.outcome else {
            Issue.record("expected a retry before the service accepted anything, got \(unconfirmed.outcome)")
            return
        }
        #expect(why.contains("VAPID public key mismatch (errno 109)") && why.contains("accepted none"), "\(why)")

        let open = try #require(try fixture.sandbox.subscribe(count: 1).first)
        #expect(await fixture.send(fixture.job("{}"), to: open).outcome == .sent)
        let foreign = await fixture.send(fixture.job("{}"), to: restricted[1])
        #expect(foreign.status == 401)
        #expect(foreign.outcome == .tokenInvalid(reason: "VAPID public key mismatch (errno 109)"))
        #expect(fixture.client.configurationFit(of: foreign, job: fixture.job("{}")) == .fits)
        await fixture.close()
    }

    /// A trusted service refusing the key for three subscriptions while accepting none: the app's
    /// credentials problem, naming the key, the subject and the evidence; the first two retry.
    @Test func aRevokedKeyAtATrustedServiceIsTheAppsCredentialsProblem() async throws {
        let fixture = try await Fixture(trustSandbox: true)
        let subscriptions = try fixture.sandbox.subscribe(count: 4)
        fixture.sandbox.revoke(vapidPublicKey: fixture.key.publicKey)
        for subscription in subscriptions[0...1] {
            let early = await fixture.send(fixture.job("{}"), to: subscription)
            #expect(early.status == 403)
            guard case .retryable = early.outcome else {
                Issue.record("expected a retry while the evidence gathers, got \(early.outcome)")
                return
            }
        }
        let third = await fixture.send(fixture.job("{}"), to: subscriptions[2])
        #expect(third.status == 403)
        #expect(third.reason?.contains("BadJwtToken") == true)
        guard case let .credentialsProblem(reason) = third.outcome else {
            Issue.record("expected a credentials problem, got \(third.outcome)")
            return
        }
        #expect(reason.contains("VAPID"))
        #expect(reason.contains("refused 3 subscriptions"), "\(reason)")
        #expect(reason.contains(String(fixture.key.publicKeyBase64URL.prefix(16))), "the message names the key")
        #expect(reason.contains("mailto:push@example.com"), "and the subject")
        #expect(fixture.client.configurationFit(of: third, job: fixture.job("{}")) == .misconfigured(reason: reason))
        guard case .credentialsProblem = await fixture.send(fixture.job("{}"), to: subscriptions[3]).outcome else {
            Issue.record("the next refusal is held with the app too")
            return
        }
        fixture.sandbox.reinstate(vapidPublicKey: fixture.key.publicKey)
        #expect(await fixture.send(fixture.job("{}"), to: subscriptions[0]).outcome == .sent)
        await fixture.close()
    }

    /// An app without the opt-in sends nothing to the sandbox on 127.0.0.1, whether the
    /// endpoint names the address or a name that resolves to it; each device fails saying why.
    @Test(arguments: ["127.0.0.1", "localhost"])
    func withoutTheOptInALoopbackEndpointIsRefused(host: String) async throws {
        let fixture = try await Fixture { $0.allowPrivateEndpoints = false }
        let subscription = try #require(try fixture.sandbox.subscribe(count: 1).first)
        let endpoint = subscription.endpoint.replacingOccurrences(of: "127.0.0.1", with: host)
        let compact = subscription.compact.replacingOccurrences(of: "127.0.0.1", with: host)
        let result = await withCheckedContinuation { continuation in
            fixture.client.send(fixture.job("{}"), to: DeviceToken(identity: endpoint, given: compact), requestID: "x") {
                continuation.resume(returning: $0)
            }
        }
        #expect(result.reason == "EndpointNotAllowed")
        guard case let .permanentFailure(reason) = result.outcome else {
            Issue.record("expected a permanent failure, got \(result.outcome)")
            return
        }
        #expect(reason.hasPrefix("EndpointNotAllowed: "))
        #expect(reason.contains(host) && reason.contains("loopback"), "\(reason)")
        #expect(fixture.sandbox.received().isEmpty)
        await fixture.close()
    }

    @Test func subscriptionsOnSeveralServicesGetAPoolEach() async throws {
        let first = try await Fixture()
        let secondSandbox = WebPushSandbox(stateDirectory: first.directory, logger: Logger(label: "test"))
        _ = try await secondSandbox.start()
        let a = try #require(try first.sandbox.subscribe(count: 1).first)
        let b = try #require(try secondSandbox.subscribe(count: 1).first)
        #expect(await first.send(first.job(#"{"to":"a"}"#), to: a).outcome == .sent)
        #expect(await first.send(first.job(#"{"to":"b"}"#), to: b).outcome == .sent)
        #expect(first.client.origins == 2)
        #expect(secondSandbox.received().map { String(decoding: $0.plaintext, as: UTF8.self) } == [#"{"to":"b"}"#])
        await secondSandbox.stop()
        await first.close()
    }

    @Test func pastMaxOriginsTheIdlePoolsClose() async throws {
        let fixture = try await Fixture { $0.maxOrigins = 1 }
        var sandboxes: [WebPushSandbox] = []
        for index in 0..<3 {
            let sandbox = WebPushSandbox(stateDirectory: fixture.directory, logger: Logger(label: "test"))
            _ = try await sandbox.start()
            sandboxes.append(sandbox)
            let subscription = try #require(try sandbox.subscribe(count: 1).first)
            #expect(await fixture.send(fixture.job(#"{"n":\#(index)}"#), to: subscription).outcome == .sent)
            #expect(fixture.client.origins == 1, "the pool of the service before was idle and closed")
        }
        for sandbox in sandboxes { await sandbox.stop() }
        await fixture.close()
    }

    /// A push service that speaks only HTTP/1.1 fails its devices at once, saying why; one that
    /// cannot be reached uses up the device's attempts: neither pauses the app.
    @Test func aServiceWithoutHTTP2OrUnreachableIsItsDevicesFailureNotTheApps() async throws {
        let fixture = try await Fixture()
        let oldService = WebPushSandbox(stateDirectory: fixture.directory, offersHTTP2: false, logger: Logger(label: "test"))
        _ = try await oldService.start()
        let subscription = try #require(try oldService.subscribe(count: 1).first)
        let refused = await fixture.send(fixture.job("{}"), to: subscription)
        #expect(refused.reason == "HTTP2NotOffered")
        guard case let .permanentFailure(reason) = refused.outcome else {
            Issue.record("expected a permanent failure, got \(refused.outcome)")
            return
        }
        #expect(reason.contains("HTTP/2"))
        let port = Int(subscription.endpoint.split(separator: ":")[2].prefix { $0.isNumber }) ?? 0
        await oldService.stop()
        let unreachable = await fixture.send(fixture.job("{}"), to: subscription)
        guard case let .retryable(why) = unreachable.outcome else {
            Issue.record("expected a retry using an attempt, got \(unreachable.outcome)")
            return
        }
        #expect(why.contains("127.0.0.1:\(port)"), "the reason names the push service")
        await fixture.close()
    }

    /// pywebpush, the Python sender most Web Push servers use, sends to the sandbox over HTTP/1.1
    /// and the sandbox decrypts it: the sandbox is a push service that code not ours agrees with.
    @Test func pywebpushSendsToTheSandbox() async throws {
        let fixture = try await Fixture()
        let subscription = try #require(try fixture.sandbox.subscribe(count: 1, applicationServerKey: fixture.key.publicKey).first)
        let result = try await PythonPeer.run(Self.pywebpushSend, [
            subscription.json, try fixture.key.privateKeyBase64URL(), fixture.sandbox.material.caCertificateFile,
        ])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.hasPrefix("201"), "\(result.stdout) \(result.stderr)")
        let received = try #require(fixture.sandbox.received().first)
        #expect(received.status == 201)
        #expect(String(decoding: received.plaintext, as: UTF8.self) == #"{"title":"from pywebpush"}"#)
        #expect(received.httpVersion == "HTTP/1.1")
        #expect(received.ttl == 60)
        #expect(received.subject == "mailto:peer@example.com")
        await fixture.close()
    }

    /// argv: subscription JSON, VAPID private key (base64url), CA file. Prints the status.
    static let pywebpushSend = #"""
    import json, sys
    from importlib.metadata import version
    import requests
    from pywebpush import webpush
    if version("pywebpush") != "2.5.0":
        sys.exit("pywebpush %s, not the pinned 2.5.0: run ops/python-peers.sh" % version("pywebpush"))
    session = requests.Session()
    # REQUESTS_CA_BUNDLE in the environment would win over the session's CA: trust only the sandbox's.
    session.trust_env = False
    session.verify = sys.argv[3]
    response = webpush(json.loads(sys.argv[1]), data='{"title":"from pywebpush"}', vapid_private_key=sys.argv[2],
                       vapid_claims={"sub": "mailto:peer@example.com"}, ttl=60, requests_session=session)
    print(response.status_code, response.headers.get("Location"))
    """#
}

/// A subscription's keys under another id of the same service (one the service never made).
enum SandboxWebPushSubscriptionCopy {
    static func withID(_ id: String, of subscription: SandboxWebPushSubscription) -> (endpoint: String, compact: String) {
        let endpoint = subscription.endpoint.replacingOccurrences(of: "/wp/\(subscription.id)", with: "/wp/\(id)")
        return (endpoint, "\(endpoint)#p256dh=\(subscription.p256dh)&auth=\(subscription.auth)")
    }
}
