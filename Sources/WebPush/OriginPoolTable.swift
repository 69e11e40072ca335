/// Which push-service origins have a connection pool, as a value: requests come and go, time
/// passes, and it says which pool to use, which to open, and which to shut down. Each pool is an
/// I/O thread and its connections, and the origins come from subscriptions anyone can write, so
/// the table holds at most `maxOrigins` pools whatever the traffic:
/// - a new origin takes the place of the least recently used pool with nothing in flight;
/// - when every pool has requests in flight, a new origin is refused (its device is retried);
/// - a pool with nothing in flight for `idleTimeout` is shut down, whether the table is full or not.
/// `Handle` is the pool (`WebPushOriginPool`), generic so that tests drive the table without threads.
struct OriginPoolTable<Handle: Sendable>: Sendable {
    struct Entry: Sendable {
        var pool: Handle
        var lastUse: ContinuousClock.Instant
        /// Requests handed out and not yet finished: a pool is shut down only at zero, so no
        /// eviction fails a request.
        var inFlight: Int
    }

    enum AcquireStep: Sendable {
        /// The origin has a pool: one more request counted on it.
        case use(Handle)
        /// Open a pool for the origin (`opened`), after shutting these down.
        case open(shuttingDown: [Handle])
        /// Every one of the `maxOrigins` pools has requests in flight.
        case full
    }

    let maxOrigins: Int
    let idleTimeout: Duration
    private(set) var entries: [WebPushEndpointOrigin: Entry] = [:]

    init(maxOrigins: Int, idleTimeout: Duration) {
        self.maxOrigins = max(1, maxOrigins)
        self.idleTimeout = idleTimeout
    }

    mutating func acquire(_ origin: WebPushEndpointOrigin, now: ContinuousClock.Instant) -> AcquireStep {
        if var entry = entries[origin] {
            entry.lastUse = now
            entry.inFlight += 1
            entries[origin] = entry
            return .use(entry.pool)
        }
        guard entries.count >= maxOrigins else { return .open(shuttingDown: []) }
        let idle = entries.filter { $0.value.inFlight == 0 }
        guard let oldest = idle.min(by: { $0.value.lastUse < $1.value.lastUse }) else { return .full }
        entries[oldest.key] = nil
        return .open(shuttingDown: [oldest.value.pool])
    }

    /// The pool `acquire` asked for, with its first request counted.
    mutating func opened(_ origin: WebPushEndpointOrigin, pool: Handle, now: ContinuousClock.Instant) {
        entries[origin] = Entry(pool: pool, lastUse: now, inFlight: 1)
    }

    /// The origin's pool becomes `pool` (its requests in flight stay counted); the old one is
    /// returned for the caller to shut down once its own requests are done.
    mutating func replace(_ origin: WebPushEndpointOrigin, with pool: Handle, now: ContinuousClock.Instant) -> Handle? {
        guard var entry = entries[origin] else { return nil }
        let old = entry.pool
        entry.pool = pool
        entry.lastUse = now
        entries[origin] = entry
        return old
    }

    mutating func finished(_ origin: WebPushEndpointOrigin, now: ContinuousClock.Instant) {
        guard var entry = entries[origin] else { return }
        entry.inFlight = max(0, entry.inFlight - 1)
        entry.lastUse = now
        entries[origin] = entry
    }

    /// Pools idle for `idleTimeout` leave the table: the caller shuts them down.
    mutating func sweep(now: ContinuousClock.Instant) -> [Handle] {
        var gone: [Handle] = []
        for (origin, entry) in entries where entry.inFlight == 0 && now - entry.lastUse >= idleTimeout {
            entries[origin] = nil
            gone.append(entry.pool)
        }
        return gone
    }

    mutating func removeAll() -> [Handle] {
        defer { entries = [:] }
        return entries.values.map(\.pool)
    }
}
