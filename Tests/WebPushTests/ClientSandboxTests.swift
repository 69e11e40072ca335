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
        // The second TTL is what was left of 30 s when it was sent: at most the seconds elapsed less.
        let elapsed = UnixTime.now().seconds - now
        let ttls = fixture.sandbox.received().map(\.ttl)
        #expect(ttls.count == 2 && ttls[0] == 60)
        #expect(ttls.count == 2 && (30 - elapsed...30).contains(ttls[1] ?? -1), "\(ttls), \(elapsed) s elapsed")
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
            fixture.client.send(fixture.job("{}"), to: DeviceToken(identity: unknown.compact, given: unknown.compact), requestID: "x") {
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
        let compact = subscription.compact.replacingOccurrences(of: "127.0.0.1", with: host)
        let result = await withCheckedContinuation { continuation in
            fixture.client.send(fixture.job("{}"), to: DeviceToken(identity: compact, given: compact), requestID: "x") {
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

    /// A push service that speaks only HTTP/1.1 (no `h2` in ALPN) gets its messages over HTTP/1.1:
    /// the first one too, without using an attempt; the origin's pool stays HTTP/1.1 for the next
    /// ones. Once it has delivered and then cannot be reached, it is an outage, as over HTTP/2:
    /// its devices wait without using attempts (`serviceDown`), naming the service.
    @Test func aServiceWithoutHTTP2GetsHTTP1AndAnUnreachableOneIsItsDevicesFailure() async throws {
        let fixture = try await Fixture()
        let oldService = WebPushSandbox(stateDirectory: fixture.directory, offersHTTP2: false, logger: Logger(label: "test"))
        _ = try await oldService.start()
        let subscriptions = try oldService.subscribe(count: 2, applicationServerKey: fixture.key.publicKey)
        for (index, subscription) in subscriptions.enumerated() {
            let result = await fixture.send(fixture.job(#"{"n":\#(index)}"#), to: subscription)
            #expect(result.outcome == .sent, "\(result.outcome)")
            #expect(result.status == 201)
        }
        let received = oldService.received()
        #expect(received.map(\.httpVersion) == ["HTTP/1.1", "HTTP/1.1"])
        #expect(received.map { String(decoding: $0.plaintext, as: UTF8.self) } == [#"{"n":0}"#, #"{"n":1}"#])
        #expect(received.allSatisfy { $0.vapidKey == fixture.key.publicKeyBase64URL })
        #expect(fixture.client.origins == 1, "one pool for the origin, now HTTP/1.1")
        let subscription = try #require(subscriptions.first)
        let port = Int(subscription.endpoint.split(separator: ":")[2].prefix { $0.isNumber }) ?? 0
        await oldService.stop()
        let unreachable = await fixture.send(fixture.job("{}"), to: subscription)
        await fixture.close()
        guard case let .serviceDown(why) = unreachable.outcome else {
            Issue.record("expected an outage wait, got \(unreachable.outcome)")
            return
        }
        #expect(why.contains("127.0.0.1:\(port)"), "the reason names the push service")
    }

    /// An HTTP/1.1-only push service that is not ours: Python's `http.server` over TLS, offering only
    /// `http/1.1` in ALPN, decrypts what it receives with `http_ece` (the subscription's private key
    /// is its own) and answers 201 with a `Location`. The worker's message arrives there intact.
    @Test func pythonHTTP1ServiceDecryptsTheMessage() async throws {
        let fixture = try await Fixture()
        let (result, output) = try await Self.send(fixture.job(#"{"title":"over HTTP/1.1"}"#), toPythonService: Self.pythonHTTP1Service, fixture)
        #expect(output.status == 0, "\(output.stdout) \(output.stderr)")
        #expect(result.outcome == .sent, "\(result.outcome)")
        #expect(result.status == 201)
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("HTTP/1.1 POST /push/one"), "\(output.stdout)")
        #expect(lines.contains(#"plaintext {"title":"over HTTP/1.1"}"#), "\(output.stdout)")
        await fixture.close()
    }

    /// A hostile HTTP/1.1-only service answers 201 and then an endless chunked body: the client
    /// keeps at most the response limit, cancels the request and closes the connection, and the
    /// device fails (ResponseTooLarge) instead of the worker's memory growing. The service writes
    /// at most 256 MiB and reports how much the client took before the connection closed (before
    /// the TLS close stopped waiting for the service, it read all 256 MiB).
    @Test func anEndlessHTTP1AnswerIsCut() async throws {
        let fixture = try await Fixture()
        let (result, output) = try await Self.send(fixture.job("{}"), toPythonService: Self.pythonEndlessHTTP1Service, fixture)
        #expect(output.status == 0, "\(output.stdout) \(output.stderr)")
        #expect(result.reason == "ResponseTooLarge", "\(result)")
        guard case .permanentFailure = result.outcome else {
            Issue.record("expected the device to fail, got \(result.outcome)")
            return
        }
        let sent = Int(output.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
        #expect(sent >= 0 && sent < 64 << 20, "the client stopped reading early: \(output.stdout)")
        await fixture.close()
    }

    /// Runs a Python push service (argv: certificate, key, where it writes its subscription), waits
    /// for its subscription (observed progress, not a delay), sends `job` there and returns the
    /// answer with what the service printed once it ended.
    static func send(_ job: PushJob, toPythonService program: String, _ fixture: Fixture) async throws -> (PushResult, PythonPeer.Result) {
        let subscriptionFile = fixture.directory + "/python-subscription-\(UUID().uuidString).txt"
        let material = fixture.sandbox.material
        async let peer = PythonPeer.run(program, [material.serverCertificateFile, material.serverPrivateKeyFile, subscriptionFile],
                                        timeout: .seconds(90))
        var written: Data?
        for _ in 0..<600 where written == nil {
            written = FileManager.default.contents(atPath: subscriptionFile).flatMap { $0.isEmpty ? nil : $0 }
            if written == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let compact = String(decoding: try #require(written), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let device = try WebPushJobRules().device(from: .string(compact))
        let result = await withCheckedContinuation { continuation in
            fixture.client.send(job, to: device, requestID: "unused") { continuation.resume(returning: $0) }
        }
        return (result, try await peer)
    }

    /// argv: certificate, key, where to write the subscription. Answers one POST (ALPN `http/1.1`
    /// only) with 201 and chunks of 64 KiB until the connection breaks or 256 MiB are written; a
    /// connection that closes before sending a request (the HTTP/2 attempt) is passed over.
    static let pythonEndlessHTTP1Service = #"""
    import base64, os, socket, ssl, sys
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives import serialization
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    b64 = lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    context.set_alpn_protocols(["http/1.1"])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    with open(sys.argv[3] + ".tmp", "w") as f:
        f.write("https://127.0.0.1:%d/endless#p256dh=%s&auth=%s" % (port, b64(public), b64(os.urandom(16))))
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    # The worker's HTTP/2 attempt comes first and closes after the handshake: wait for a request.
    listener.settimeout(60)
    request = b""
    while b"\r\n\r\n" not in request:
        connection, _ = listener.accept()
        try:
            tls = context.wrap_socket(connection, server_side=True)
        except (OSError, ssl.SSLError):
            continue
        request = b""
        while b"\r\n\r\n" not in request:
            received = tls.recv(65536)
            if not received:
                break
            request += received
    head, _, body = request.partition(b"\r\n\r\n")
    length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
    while len(body) < length:
        body += tls.recv(65536)
    tls.sendall(b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n" % 65536 + b"x" * 65536 + b"\r\n"
    sent = 0
    tls.settimeout(20)
    try:
        while sent < 256 << 20:
            tls.sendall(chunk)
            sent += 65536
    except (OSError, ssl.SSLError) as error:
        print("stopped", type(error).__name__, error)
    print("sent", sent)
    """#

    /// argv: certificate, key, where to write the subscription. Serves one POST over TLS with
    /// ALPN `http/1.1` only, decrypts it (aes128gcm) and prints what it saw.
    static let pythonHTTP1Service = #"""
    import base64, http.server, os, ssl, sys
    from importlib.metadata import version
    import http_ece
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives import serialization
    if version("http-ece") != "1.2.1":
        sys.exit("http-ece %s, not the pinned 1.2.1: run ops/python-peers.sh" % version("http-ece"))
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    auth = os.urandom(16)
    b64 = lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            plaintext = http_ece.decrypt(body, private_key=key, dh=None, auth_secret=auth, version="aes128gcm")
            print(self.request_version, "POST", self.path)
            print("plaintext", plaintext.decode())
            sys.stdout.flush()
            self.send_response(201)
            self.send_header("Location", "https://127.0.0.1/message/1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            # One message is all this service takes: without this the handler would wait on the
            # kept-alive connection for the next request, and the script never end.
            self.close_connection = True
            self.server.done = True
        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    context.set_alpn_protocols(["http/1.1"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.done = False
    port = server.server_address[1]
    with open(sys.argv[3] + ".tmp", "w") as f:
        f.write("https://127.0.0.1:%d/push/one#p256dh=%s&auth=%s" % (port, b64(public), b64(auth)))
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    while not server.done:
        server.handle_request()
    """#

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
