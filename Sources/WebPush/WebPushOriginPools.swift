import HTTP2
import Logging
import NIOConcurrencyHelpers

/// One HTTP/2 connection pool per push-service origin, made when a subscription first points
/// there. An app's subscriptions spread over a few services (fcm.googleapis.com,
/// updates.push.services.mozilla.com, web.push.apple.com, *.notify.windows.com), each a host of
/// its own, while an `HTTP2Client` serves one host. The set is bounded: past `maxOrigins`, pools
/// with nothing in flight close, least recently used first; each pool closes its idle connections
/// itself.
final class WebPushOriginPools: Sendable {
    private struct Pool {
        let client: HTTP2Client
        var lastUse: UInt64
        /// Requests sent and not yet answered: a pool is closed only at zero, so no eviction
        /// fails a request.
        var inFlight: Int
    }

    private struct State {
        var pools: [WebPushEndpointOrigin: Pool] = [:]
        var uses: UInt64 = 0
        var closed = false
        /// Pools taken out over the bound: closed by `shutdown`, which waits for their threads
        /// (a client dropped without it stops its thread unwaited, which must not race the exit).
        var retired: [HTTP2Client] = []
    }

    private let configuration: WebPushConfiguration
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    init(configuration: WebPushConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The pool for `origin`, counted as one more request in flight until `finished(origin)`;
    /// nil once shut down.
    func acquire(_ origin: WebPushEndpointOrigin) -> HTTP2Client? {
        state.withLockedValue { state -> HTTP2Client? in
            guard !state.closed else { return nil }
            state.uses &+= 1
            if var pool = state.pools[origin] {
                pool.lastUse = state.uses
                pool.inFlight += 1
                state.pools[origin] = pool
                return pool.client
            }
            let client = HTTP2Client(configuration: clientConfiguration(for: origin), logger: logger)
            state.pools[origin] = Pool(client: client, lastUse: state.uses, inFlight: 1)
            state.retired += Self.evictIdle(from: &state, keeping: configuration.maxOrigins)
            return client
        }
    }

    func finished(_ origin: WebPushEndpointOrigin) {
        state.withLockedValue { state in
            state.pools[origin]?.inFlight -= 1
        }
    }

    /// Over the bound: the least recently used pools with nothing in flight leave (their idle
    /// connections close by themselves; `minConnections` is 0).
    private static func evictIdle(from state: inout State, keeping bound: Int) -> [HTTP2Client] {
        guard state.pools.count > bound else { return [] }
        let idle = state.pools.filter { $0.value.inFlight == 0 }.sorted { $0.value.lastUse < $1.value.lastUse }
        var evicted: [HTTP2Client] = []
        for (origin, pool) in idle.prefix(state.pools.count - bound) {
            state.pools[origin] = nil
            evicted.append(pool.client)
        }
        return evicted
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
        // Read from an answer: where the message is (201), the TTL the service kept, when to retry.
        http.keptResponseHeaders = ["location", "ttl", "retry-after"]
        return http
    }

    var origins: Int { state.withLockedValue { $0.pools.count } }

    /// The pools' streams now, and for the origins not yet met what a new pool would allow: an
    /// app reaching a new service is not held back by a budget sized for the old ones.
    var streamCapacity: Int {
        let open = state.withLockedValue { Array($0.pools.values.map(\.client)) }
        let perPool = configuration.maxConnectionsPerOrigin * configuration.maxStreamsPerConnection
        return open.reduce(0) { $0 + $1.streamCapacity } + max(0, configuration.maxOrigins - open.count) * perPool
    }

    var statistics: HTTP2ClientStatistics {
        let open = state.withLockedValue { Array($0.pools.values.map(\.client)) }
        var total = HTTP2ClientStatistics()
        for client in open {
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
        let all = state.withLockedValue { state -> [HTTP2Client] in
            state.closed = true
            defer {
                state.pools = [:]
                state.retired = []
            }
            return state.pools.values.map(\.client) + state.retired
        }
        for client in all { await client.shutdown() }
    }
}
