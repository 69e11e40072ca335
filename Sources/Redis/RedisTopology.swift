/// How the client finds the node a command goes to.
public enum RedisTopology: Sendable, Hashable {
    /// One server, `redis://`.
    case standalone
    /// `redis-sentinel://`: the sentinels, asked in this order, name the master of `masterName`.
    /// `sentinelPassword` is sent to the sentinels (AUTH) only when given; the URL's password is
    /// the data nodes'.
    case sentinel(sentinels: [RedisNodeAddress], masterName: String, sentinelPassword: String?)
    /// `redis-cluster://`: any reachable one of these nodes tells the slot map.
    case cluster(seeds: [RedisNodeAddress])
}
