/// Whether the relay takes one more post: the client's bucket and the app's (`RelayLimits`) must
/// both have a token, and a post is charged to both or to neither. A pure value driven by the time
/// it is given (as `RateLimitBucket`), so every decision is tested without a clock.
///
/// The client table is bounded: at `maxAddresses` it drops the buckets that have refilled (nothing
/// is forgotten), then the least recently seen, down to 7/8 of the bound, so that a flood of new
/// addresses pays for a sweep only once every `maxAddresses / 8` of them.
public struct RelayAdmission: Sendable {
    public enum Decision: Sendable, Equatable {
        case allowed
        case refused(Limit, retryAfterSeconds: Int)
    }

    /// Which bucket was empty.
    public enum Limit: Sendable, Equatable {
        case address
        case app
    }

    private struct Entry: Sendable {
        var bucket: RateLimitBucket
        var lastSeen: Duration
    }

    public let limits: RelayLimits
    private var clients: [RelayClient: Entry] = [:]
    private var apps: [String: RateLimitBucket] = [:]

    public init(limits: RelayLimits) {
        self.limits = limits
    }

    /// How many client addresses have a bucket now.
    public var trackedAddresses: Int { clients.count }

    public mutating func admit(client: RelayClient, app: String, now: Duration) -> Decision {
        let known = clients[client]
        var clientBucket = known?.bucket ?? RateLimitBucket(rate: limits.perAddress.requestsPerSecond, burst: limits.perAddress.burst, now: now)
        if case let .refused(seconds) = clientBucket.take(now: now) {
            // Kept and marked seen: a client refused again and again must not be the one evicted,
            // or it would come back with a full burst.
            clients[client] = Entry(bucket: clientBucket, lastSeen: now)
            return .refused(.address, retryAfterSeconds: seconds)
        }
        var appBucket = apps[app] ?? RateLimitBucket(rate: limits.perApp.requestsPerSecond, burst: limits.perApp.burst, now: now)
        if case let .refused(seconds) = appBucket.take(now: now) {
            apps[app] = appBucket
            if var known {
                known.lastSeen = now
                clients[client] = known
            }
            return .refused(.app, retryAfterSeconds: seconds)
        }
        apps[app] = appBucket
        if known == nil, clients.count >= limits.maxAddresses { makeRoom(now: now) }
        clients[client] = Entry(bucket: clientBucket, lastSeen: now)
        return .allowed
    }

    private mutating func makeRoom(now: Duration) {
        clients = clients.filter { !$0.value.bucket.isFull(now: now) }
        let target = max(0, limits.maxAddresses - max(1, limits.maxAddresses / 8))
        guard clients.count > target else { return }
        let oldest = clients.sorted { $0.value.lastSeen < $1.value.lastSeen }.prefix(clients.count - target)
        for (client, _) in oldest { clients[client] = nil }
    }
}
