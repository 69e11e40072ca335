import AsyncHTTPClient
import HTTP2
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One push-service origin that does not offer HTTP/2 (no `h2` in ALPN), served over HTTP/1.1
/// with keep-alive through AsyncHTTPClient. The same bounds hold as on the HTTP/2 path:
/// - the host is resolved here and its addresses checked (`AddressScreen`) before any connection;
///   the client then connects to the checked address only (`dnsOverride`), while TLS still
///   verifies the certificate for the host name, so DNS rebinding cannot swap the address;
/// - at most `maxConnectionsPerOrigin` connections, and requests in flight bounded as the HTTP/2
///   pool's streams are; beyond that a request is refused unsent;
/// - the answer's body is kept up to `HTTP2ResponseLimits.maxBodyBytes`; past that the request is
///   cancelled and the connection closed, and the header fields are read from NIO's parser, which
///   bounds their size;
/// - redirects are not followed: a push service answers, it does not send the message elsewhere.
/// All origins share NIO's fixed event loops (`MultiThreadedEventLoopGroup.singleton`): no thread
/// per origin.
final class WebPushHTTP1Origin: Sendable {
    typealias Completion = @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void

    private struct Pending: Sendable {
        let path: String
        let headers: [HTTP2Header]
        let body: [UInt8]
        let completion: Completion
    }

    private enum Phase: Sendable {
        /// Nothing resolved yet, or the last lookup failed: the next request looks the host up.
        case unresolved
        case resolving([Pending])
        case ready(HTTPClient)
        /// The host resolved only to addresses this app may not reach; kept until the pool idles out.
        case refused(HTTP2Error)
        case closed
    }

    private struct State: Sendable {
        var phase = Phase.unresolved
        var inFlight = 0
    }

    let origin: WebPushEndpointOrigin
    private let configuration: WebPushConfiguration
    private let limits = HTTP2ResponseLimits()
    private let maxInFlight: Int
    private let state = NIOLockedValueBox(State())
    private let logger: Logger

    init(origin: WebPushEndpointOrigin, configuration: WebPushConfiguration, logger: Logger) {
        self.origin = origin
        self.configuration = configuration
        self.logger = logger
        maxInFlight = max(1, configuration.maxConnectionsPerOrigin * configuration.maxStreamsPerConnection)
    }

    /// What this origin can carry at once: its connections, one request each.
    var streamCapacity: Int { max(1, configuration.maxConnectionsPerOrigin) }

    var requestsInFlight: Int { state.withLockedValue { $0.inFlight } }

    func send(path: String, headers: [HTTP2Header], body: [UInt8], completion: @escaping Completion) {
        let pending = Pending(path: path, headers: headers, body: body, completion: completion)
        enum Step { case execute(HTTPClient), resolve, wait, fail(HTTP2Error) }
        let step: Step = state.withLockedValue { state in
            guard state.inFlight < maxInFlight else {
                return .fail(HTTP2Error(code: .unsent, message: "\(origin) has \(maxInFlight) requests in flight over HTTP/1.1"))
            }
            switch state.phase {
            case .closed:
                return .fail(HTTP2Error(code: .shutdown, message: "the Web Push client is shut down"))
            case .refused(let error):
                return .fail(error)
            case .ready(let client):
                state.inFlight += 1
                return .execute(client)
            case .resolving(var waiting):
                state.inFlight += 1
                waiting.append(pending)
                state.phase = .resolving(waiting)
                return .wait
            case .unresolved:
                state.inFlight += 1
                state.phase = .resolving([pending])
                return .resolve
            }
        }
        switch step {
        case .execute(let client): execute(pending, on: client)
        case .resolve: resolve()
        case .wait: break
        case .fail(let error): completion(.failure(error))
        }
    }

    private func resolve() {
        guard configuration.proxy == nil else {
            // Through a proxy the proxy resolves and connects (as on the HTTP/2 path).
            ready(with: makeClient(address: nil))
            return
        }
        AddressLookup.resolve(host: origin.host, port: origin.port) { [self] result in
            switch result {
            case .success(let addresses):
                let screen = AddressScreen(addresses)
                if !configuration.allowPrivateEndpoints, let refusal = screen.refusal(host: origin.host) {
                    fail(with: refusal, keep: true)
                } else if let address = configuration.allowPrivateEndpoints ? addresses.first : screen.usable.first {
                    ready(with: makeClient(address: address))
                } else {
                    fail(with: HTTP2Error(code: .connectFailed, message: "DNS lookup of \(origin.host) returned no address"), keep: false)
                }
            case .failure(let error):
                fail(with: error, keep: false)
            }
        }
    }

    private func ready(with client: HTTPClient) {
        let waiting: [Pending]? = state.withLockedValue { state in
            guard case .resolving(let waiting) = state.phase else { return nil }
            state.phase = .ready(client)
            return waiting
        }
        guard let waiting else {
            // Shut down while resolving: the client was never used.
            client.shutdown { _ in }
            return
        }
        for pending in waiting { execute(pending, on: client) }
    }

    /// `keep`: the refusal stands for later requests too (the address will not change its scope).
    private func fail(with error: HTTP2Error, keep: Bool) {
        let waiting: [Pending] = state.withLockedValue { state in
            guard case .resolving(let waiting) = state.phase else { return [] }
            state.phase = keep ? .refused(error) : .unresolved
            state.inFlight -= waiting.count
            return waiting
        }
        for pending in waiting { pending.completion(.failure(error)) }
    }

    private func makeClient(address: IPAddress?) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        // Closing a connection waits for the service's close_notify while reading on (5 s by
        // default): a hostile service answering without end kept it reading all that time
        // (measured: docs/evidence/code-measurements.md#web-push-tls-shutdown). A connection this
        // client closes is closed at once.
        tls.shutdownTimeout = .zero
        if let extraCAFile = configuration.extraCAFile {
            // The system's roots stay trusted; the file's are added (a test or on-premises service).
            tls.additionalTrustRoots = [.file(extraCAFile)]
        }
        var client = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.requestTimeout)),
            connectionPool: .init(idleTimeout: TimeAmount(configuration.idleConnectionTimeout),
                                  concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, configuration.maxConnectionsPerOrigin)),
            proxy: configuration.proxy.map { proxy in
                let authorization = proxy.username.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
                return .server(host: proxy.host, port: proxy.port, authorization: authorization)
            },
            decompression: .disabled)
        client.httpVersion = .http1Only
        if let address {
            client.dnsOverride = [origin.host: address.description]
        }
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: client, backgroundActivityLogger: logger)
    }

    private func execute(_ pending: Pending, on client: HTTPClient) {
        let finish: Completion = { [state] result in
            state.withLockedValue { $0.inFlight -= 1 }
            pending.completion(result)
        }
        let scheme = origin.value.hasPrefix("http://") ? "http" : "https"
        let host = origin.host.contains(":") ? "[\(origin.host)]" : origin.host
        let request: HTTPClient.Request
        do {
            var headers = HTTPHeaders()
            for header in pending.headers { headers.add(name: header.name, value: header.value) }
            request = try HTTPClient.Request(url: "\(scheme)://\(host):\(origin.port)\(pending.path)", method: .POST,
                                             headers: headers, body: .bytes(pending.body))
        } catch {
            finish(.failure(HTTP2Error(code: .protocolError, message: "cannot make an HTTP/1.1 request to \(origin): \(error)")))
            return
        }
        let accumulator = ResponseAccumulator(request: request, maxBodySize: limits.maxBodyBytes)
        let deadline = NIODeadline.now() + TimeAmount(configuration.requestTimeout)
        let limits = limits, origin = origin.value
        client.execute(request: request, delegate: accumulator, deadline: deadline, logger: logger).futureResult.whenComplete { result in
            switch result {
            case .success(let response):
                finish(.success(Self.response(response, limits: limits)))
            case .failure(let error):
                finish(.failure(Self.error(error, origin: origin)))
            }
        }
    }

    /// The answer in the HTTP/2 client's terms, so that one reader (`WebPushAnswer`) reads both;
    /// header values past the kept bound are cut, as the HTTP/2 pool does.
    private static func response(_ response: HTTPClient.Response, limits: HTTP2ResponseLimits) -> HTTP2Response {
        var headers: [HTTP2Header] = []
        for (name, value) in response.headers.prefix(limits.maxKeptHeaders) {
            headers.append(HTTP2Header(name: name.lowercased(), value: String(value.utf8.prefix(limits.maxHeaderValueBytes)) ?? ""))
        }
        let body = response.body.map { Array($0.readableBytesView) } ?? []
        return HTTP2Response(status: Int(response.status.code), headers: headers, body: body)
    }

    /// AsyncHTTPClient's failures in the HTTP/2 client's codes, which say whether the request may
    /// have reached the service: only a failure before the connection was made is "never sent".
    private static func error(_ error: any Error, origin: String) -> HTTP2Error {
        if error is ResponseAccumulator.ResponseTooBigError {
            return HTTP2Error(code: .responseTooLarge, message: "\(origin) answered with a body over the kept bound; the request was cancelled")
        }
        if error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError {
            return HTTP2Error(code: .tlsFailed, message: "TLS with \(origin) failed: \(error)")
        }
        if error is NIOConnectionError {
            return HTTP2Error(code: .connectFailed, message: "cannot connect to \(origin): \(error)")
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .connectTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout, .tlsHandshakeTimeout, .proxyAuthenticationRequired,
                 .invalidProxyResponse:
                return HTTP2Error(code: .connectFailed, message: "cannot connect to \(origin): \(client)")
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return HTTP2Error(code: .timeout, message: "no answer from \(origin) in time: \(client)")
            case .alreadyShutdown:
                return HTTP2Error(code: .shutdown, message: "the Web Push client is shut down")
            default:
                return HTTP2Error(code: .connectionLost, message: "\(origin) over HTTP/1.1: \(client)")
            }
        }
        return HTTP2Error(code: .connectionLost, message: "\(origin) over HTTP/1.1: \(error)")
    }

    func shutdown() async {
        let (client, waiting): (HTTPClient?, [Pending]) = state.withLockedValue { state in
            defer { state.phase = .closed }
            switch state.phase {
            case .ready(let client): return (client, [])
            case .resolving(let waiting): return (nil, waiting)
            default: return (nil, [])
            }
        }
        for pending in waiting { pending.completion(.failure(HTTP2Error(code: .shutdown, message: "the Web Push client is shut down"))) }
        try? await client?.shutdown()
    }

    /// A pool dropped without `shutdown()` still closes its connections (AsyncHTTPClient keeps the
    /// client alive until they are closed).
    deinit {
        if case .ready(let client) = state.withLockedValue({ $0.phase }) { client.shutdown { _ in } }
    }
}

private extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
