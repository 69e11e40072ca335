import HTTP2
import Logging
import NIOConcurrencyHelpers

/// One connection pool per push-service origin, made when a subscription first points there:
/// HTTP/2, or HTTP/1.1 for a service that turned out not to offer HTTP/2 (`useHTTP1`). An app's subscriptions spread over a few services (fcm.googleapis.com,
/// updates.push.services.mozilla.com, web.push.apple.com, *.notify.windows.com), each a host of
/// its own, while an `HTTP2Client` serves one host. Which pools exist is `OriginPoolTable`'s
/// decision (at most `maxOrigins`, idle ones shut down); this holds the clients, and shuts down
/// the ones the table lets go at once, so their I/O threads exit.
final class WebPushOriginPools: Sendable {
    private struct State {
        var table: OriginPoolTable<WebPushOriginPool>
        var closed = false
        /// Shutdowns under way, by client: `shutdown` waits for them too (a client whose thread
        /// is still running must not race the process's exit).
        var closing: [ObjectIdentifier: Task<Void, Never>] = [:]
        var sweeper: Task<Void, Never>?
        /// The worker's last word on held-back demand, given to each new pool too.
        var demandHeldBack = false
    }

    private let configuration: WebPushConfiguration
    private let logger: Logger
    private let state: NIOLockedValueBox<State>

    init(configuration: WebPushConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.state = NIOLockedValueBox(State(table: OriginPoolTable(maxOrigins: configuration.maxOrigins,
                                                                    idleTimeout: configuration.idlePoolTimeout)))
        // Idle pools leave even when no request comes to notice it.
        let sweeper = Task { [weak self] in
            let period = max(configuration.idlePoolTimeout / 2, .milliseconds(100))
            while !Task.isCancelled {
                try? await Task.sleep(for: period)
                guard let self else { return }
                self.sweep()
            }
        }
        state.withLockedValue { $0.sweeper = sweeper }
    }

    /// Why a pool could not be had for an origin.
    enum Unavailable: Error {
        case shutDown
        /// Every pool has requests in flight and the table is full.
        case originsFull(Int)
    }

    /// The pool for `origin`, counted as one more request in flight until `finished(origin)`.
    func acquire(_ origin: WebPushEndpointOrigin) -> Result<WebPushOriginPool, Unavailable> {
        let now = ContinuousClock.now
        return state.withLockedValue { state -> Result<WebPushOriginPool, Unavailable> in
            guard !state.closed else { return .failure(.shutDown) }
            switch state.table.acquire(origin, now: now) {
            case .use(let client):
                return .success(client)
            case .full:
                return .failure(.originsFull(state.table.maxOrigins))
            case .open(let shuttingDown):
                close(shuttingDown, in: &state)
                let client = HTTP2Client(configuration: clientConfiguration(for: origin), logger: logger)
                if state.demandHeldBack { client.noteDemandHeldBack(true) }
                let pool = WebPushOriginPool.http2(client)
                state.table.opened(origin, pool: pool, now: now)
                return .success(pool)
            }
        }
    }

    /// The origin's service does not offer HTTP/2: its pool becomes an HTTP/1.1 one (once, however
    /// many of its requests found out), and the HTTP/2 pool that failed shuts down.
    func useHTTP1(_ origin: WebPushEndpointOrigin) -> Result<WebPushOriginPool, Unavailable> {
        let now = ContinuousClock.now
        return state.withLockedValue { state -> Result<WebPushOriginPool, Unavailable> in
            guard !state.closed else { return .failure(.shutDown) }
            switch state.table.entries[origin]?.pool {
            case .http1(let existing)?:
                return .success(.http1(existing))
            case .http2?:
                let pool = WebPushOriginPool.http1(WebPushHTTP1Origin(origin: origin, configuration: configuration, logger: logger))
                if let old = state.table.replace(origin, with: pool, now: now) { close([old], in: &state) }
                logger.info("the push service does not offer HTTP/2: sending over HTTP/1.1", metadata: ["origin": "\(origin)"])
                return .success(pool)
            case nil:
                // The asking request is counted in flight, so its origin's entry cannot have been
                // evicted or swept: only a shutdown empties the table.
                return .failure(.shutDown)
            }
        }
    }

    func finished(_ origin: WebPushEndpointOrigin) {
        let now = ContinuousClock.now
        state.withLockedValue { $0.table.finished(origin, now: now) }
    }

    private func sweep() {
        let now = ContinuousClock.now
        state.withLockedValue { state in
            guard !state.closed else { return }
            close(state.table.sweep(now: now), in: &state)
        }
    }

    /// Starts each client's shutdown now; the task removes itself when its thread has exited.
    private func close(_ pools: [WebPushOriginPool], in state: inout State) {
        for pool in pools {
            let id = pool.identity
            state.closing[id] = Task { [weak self] in
                await pool.shutdown()
                self?.state.withLockedValue { _ = $0.closing.removeValue(forKey: id) }
            }
        }
    }

    private func clientConfiguration(for origin: WebPushEndpointOrigin) -> HTTP2ClientConfiguration {
        var http = HTTP2ClientConfiguration(host: origin.host, port: origin.port)
        http.extraCAFile = configuration.extraCAFile
        http.proxy = configuration.proxy
        // The endpoint came from a browser, so from anyone: connect to public addresses only.
        http.onlyGlobalAddresses = !configuration.allowPrivateEndpoints
        http.minConnections = 0
        http.maxConnections = configuration.maxConnectionsPerOrigin
        http.maxStreamsPerConnection = configuration.maxStreamsPerConnection
        http.maxRequestsPerSecondPerConnection = configuration.maxNotificationsPerSecondPerConnection
        http.requestTimeout = configuration.requestTimeout
        http.connectTimeout = configuration.connectTimeout
        http.idlePingInterval = configuration.idlePingInterval
        http.idleConnectionTimeout = configuration.idleConnectionTimeout
        http.threadName = configuration.ioThreadName
        // Read from an answer: where the message is (201), the TTL the service kept, when to retry.
        http.keptResponseHeaders = ["location", "ttl", "retry-after"]
        return http
    }

    /// Origins with a pool now.
    var origins: Int { state.withLockedValue { $0.table.entries.count } }

    /// Pools shutting down whose threads have not exited yet.
    var closingPools: Int { state.withLockedValue { $0.closing.count } }

    /// The pools' streams now, and for the origins not yet met what a new pool would allow: an
    /// app reaching a new service is not held back by a budget sized for the old ones.
    var streamCapacity: Int {
        let open = state.withLockedValue { $0.table.entries.values.map(\.pool) }
        let perPool = configuration.maxConnectionsPerOrigin * configuration.maxStreamsPerConnection
        return open.reduce(0) { $0 + $1.streamCapacity } + max(0, configuration.maxOrigins - open.count) * perPool
    }

    /// Every HTTP/2 pool, and those made later, learn whether the worker holds demand back.
    func noteDemandHeldBack(_ heldBack: Bool) {
        let open = state.withLockedValue { state in
            state.demandHeldBack = heldBack
            return state.table.entries.values.map(\.pool)
        }
        for case .http2(let client) in open { client.noteDemandHeldBack(heldBack) }
    }

    var statistics: HTTP2ClientStatistics {
        let open = state.withLockedValue { $0.table.entries.values.map(\.pool) }
        var total = HTTP2ClientStatistics()
        for pool in open {
            guard case .http2(let client) = pool else {
                if case .http1(let origin) = pool { total.streamsInFlight += origin.requestsInFlight }
                continue
            }
            let one = client.statistics
            total.openConnections += one.openConnections
            total.connecting += one.connecting
            total.streamsInFlight += one.streamsInFlight
            total.streamCapacity += one.streamCapacity
            total.queuedRequests += one.queuedRequests
            total.connectionsOpened += one.connectionsOpened
            total.goAwaysReceived += one.goAwaysReceived
            total.pingsAcknowledged += one.pingsAcknowledged
            total.requestsCompleted += one.requestsCompleted
        }
        return total
    }

    func shutdown() async {
        let (open, closing, sweeper) = state.withLockedValue { state in
            state.closed = true
            return (state.table.removeAll(), Array(state.closing.values), state.sweeper)
        }
        sweeper?.cancel()
        for pool in open { await pool.shutdown() }
        for task in closing { await task.value }
    }
}
