#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTP2
import Logging
import NIOConcurrencyHelpers

/// The app's OAuth access token: minted from the service account with the JWT grant, fetched from
/// its `token_uri` over the project's HTTP/2 client, and shared by every request (the decisions are
/// `FCMAccessTokenState`'s). Callback-based like the sends it serves: a request with a cached token
/// goes on at once, the others wait for the one fetch under way.
public final class FCMAccessTokenSource: Sendable {
    /// The monotonic clock decides when to refresh; the wall clock stamps the JWT's `iat`.
    /// Injectable so that tests check the rules without waiting an hour.
    public struct Clock: Sendable {
        public var monotonic: @Sendable () -> ContinuousClock.Instant
        public var unixSeconds: @Sendable () -> Int

        public static let system = Clock(monotonic: { .now }, unixSeconds: { Int(time(nil)) })

        public init(monotonic: @escaping @Sendable () -> ContinuousClock.Instant, unixSeconds: @escaping @Sendable () -> Int) {
            self.monotonic = monotonic
            self.unixSeconds = unixSeconds
        }
    }

    public typealias Waiter = @Sendable (Result<String, FCMAccessTokenError>) -> Void

    private struct Locked {
        var state = FCMAccessTokenState()
        var waiters: [Waiter] = []
        /// The token endpoint's clock, learnt from its `Date` when it refused an assertion's time.
        var assertionClock = FCMAssertionClock()
    }

    private let account: FCMServiceAccount
    private let http: HTTP2Client
    private let path: String
    private let endpointName: String
    private let clock: Clock
    private let logger: Logger
    private let locked = NIOLockedValueBox(Locked())

    init(configuration: FCMConfiguration, logger: Logger, clock: Clock = .system) throws(FCMConfigurationError) {
        let endpoint = try configuration.tokenEndpoint()
        var http = HTTP2ClientConfiguration(host: endpoint.host, port: endpoint.port)
        http.extraCAFile = configuration.extraCAFile
        http.proxy = configuration.proxy
        // One request an hour: one connection, closed when idle.
        http.maxConnections = 1
        http.minConnections = 0
        http.requestTimeout = configuration.requestTimeout
        http.connectTimeout = configuration.connectTimeout
        http.idleConnectionTimeout = .seconds(60)
        // Date: the endpoint's clock, to correct an assertion it refused as outside its timeframe.
        http.keptResponseHeaders = ["date"]
        var logger = logger
        logger[metadataKey: FCMLogKeys.tokenEndpoint] = "\(configuration.serviceAccount.tokenURI)"
        self.account = configuration.serviceAccount
        self.http = HTTP2Client(configuration: http, logger: logger)
        self.path = endpoint.path
        self.endpointName = configuration.serviceAccount.tokenURI
        self.clock = clock
        self.logger = logger
    }

    /// Calls `body` with a token: at once when one is cached, else when the fetch under way ends
    /// (on the token connection's I/O thread: keep it short).
    public func withAccessToken(_ body: @escaping Waiter) {
        let decision = locked.withLockedValue { locked -> FCMAccessTokenState.Decision in
            let decision = locked.state.next(now: clock.monotonic())
            if decision == .fetch || decision == .wait { locked.waiters.append(body) }
            return decision
        }
        switch decision {
        case let .use(token): body(.success(token))
        case let .fail(error): body(.failure(error))
        case .wait: break
        case .fetch: fetch()
        }
    }

    public func accessToken() async -> Result<String, FCMAccessTokenError> {
        await withCheckedContinuation { continuation in
            withAccessToken { continuation.resume(returning: $0) }
        }
    }

    /// FCM refused `token` (401 without an FcmError detail): the next request fetches another.
    public func rejected(token: String) {
        locked.withLockedValue { $0.state.rejected(token: token) }
    }

    func shutdown() async {
        await http.shutdown()
    }

    /// - Parameter corrected: this is the one retry after the endpoint refused the assertion's time.
    private func fetch(corrected: Bool = false) {
        let assertion: String
        let now = clock.unixSeconds()
        let issuedAt = locked.withLockedValue { $0.assertionClock.issuedAt(localSeconds: now) }
        do {
            assertion = try FCMAssertion.make(for: account, issuedAt: issuedAt)
        } catch {
            finish(.failure(FCMAccessTokenError(code: .refused, "cannot sign the OAuth assertion of \(account.clientEmail): \(error)")))
            return
        }
        let request = HTTP2Request(method: "POST", path: path, headers: [
            HTTP2Header(name: "content-type", value: "application/x-www-form-urlencoded"),
            HTTP2Header(name: "accept", value: "application/json"),
        ], body: FCMAssertion.formBody(assertion: assertion))
        let clientEmail = account.clientEmail
        let endpointName = endpointName
        http.send(request) { [self] result in
            switch result {
            case let .success(response):
                switch FCMTokenEndpointAnswer(status: response.status, body: response.body, clientEmail: clientEmail, endpoint: endpointName) {
                case let .token(token, lifetime): finish(.success((token, lifetime)))
                case let .failure(error): finish(.failure(error))
                case let .outOfTimeframe(error):
                    guard correctClock(serverDate: response.header("date"), corrected: corrected) else { return finish(.failure(error)) }
                    fetch(corrected: true)
                }
            case let .failure(error):
                finish(.failure(FCMAccessTokenError(code: .unavailable, "cannot reach the token endpoint \(endpointName): \(error)")))
            }
        }
    }

    /// Whether to sign again by the endpoint's clock after it refused the assertion's time (once per
    /// fetch: never a loop); says so in the log when it does.
    private func correctClock(serverDate: String?, corrected: Bool) -> Bool {
        let now = clock.unixSeconds()
        let verdict = locked.withLockedValue { $0.assertionClock.refused(serverDate: serverDate, localSeconds: now, corrected: corrected) }
        guard case let .retry(skew) = verdict else { return false }
        logger.warning("fcm: the token endpoint refused the assertion as outside its timeframe: this machine's clock is \(abs(skew)) s \(skew > 0 ? "behind" : "ahead of") the endpoint's (its Date header); asking again with assertions dated by the endpoint's clock. Set this clock right (NTP)", metadata: [
            FCMLogKeys.serviceAccount: "\(account.clientEmail)", FCMLogKeys.clockSkew: "\(skew)",
        ])
        return true
    }

    private func finish(_ result: Result<(token: String, lifetime: Duration), FCMAccessTokenError>) {
        let (answer, waiters) = locked.withLockedValue { locked in
            let answer = locked.state.fetched(result, now: clock.monotonic())
            defer { locked.waiters = [] }
            return (answer, locked.waiters)
        }
        switch result {
        case let .success((_, lifetime)):
            logger.info("fcm: access token obtained", metadata: [
                FCMLogKeys.serviceAccount: "\(account.clientEmail)", FCMLogKeys.tokenLifetime: "\(lifetime.components.seconds)",
            ])
        case let .failure(error):
            logger.warning("fcm: no access token", metadata: [FCMLogKeys.serviceAccount: "\(account.clientEmail)", FCMLogKeys.error: "\(error.message)"])
        }
        for waiter in waiters { waiter(answer) }
    }
}
