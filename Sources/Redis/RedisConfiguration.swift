import PushCore

/// Where Redis is and how long to wait for it. `redis://[[user]:password@]host[:port][/db]`, or
/// with a host list, `redis-sentinel://…/master-name[/db]` and `redis-cluster://…` (RedisHAURL).
public struct RedisConfiguration: Sendable, Hashable {
    /// The server; with sentinels or a cluster, the first host of the list (for messages only).
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: Int
    public var connectTimeout: Duration = .seconds(5)
    public var commandTimeout: Duration = .seconds(5)
    public var topology: RedisTopology = .standalone

    public init(url: String) throws(RedisError) {
        if RedisHAURL.isHA(url) {
            do throws(ServiceURLError) {
                let parsed = try RedisHAURL(parsing: url)
                topology = parsed.topology
                username = parsed.username
                password = parsed.password
                database = parsed.database
                let first: RedisNodeAddress
                switch parsed.topology {
                case let .sentinel(sentinels, _, _): first = sentinels[0]
                case let .cluster(seeds): first = seeds[0]
                case .standalone: first = RedisNodeAddress(host: "127.0.0.1", port: 6379)
                }
                host = first.host
                port = first.port
            } catch {
                let scheme = url.hasPrefix(RedisHAURL.sentinelScheme) ? RedisHAURL.sentinelScheme : RedisHAURL.clusterScheme
                throw RedisError(.invalidURL, "\(scheme) URL: \(error.message)")
            }
            return
        }
        if url.hasPrefix("rediss://") {
            throw RedisError(.invalidURL, "redis URL must start with redis://, redis-sentinel:// or redis-cluster:// (got \"rediss://\"); TLS to Redis (rediss://) needs hiredis 1.x, which Debian 12 lacks: reach a TLS-only Redis through a local TLS tunnel (stunnel, spiped)")
        }
        if !url.hasPrefix("redis://") {
            throw RedisError(.invalidURL, "redis URL: the scheme must be redis://, redis-sentinel:// or redis-cluster://")
        }
        do throws(ServiceURLError) {
            // The project's one URL parser: it never repeats the URL (a password may be in it).
            let parsed = try ServiceURL(parsing: url, schemes: ["redis"])
            host = parsed.host.isEmpty ? "127.0.0.1" : parsed.host
            port = parsed.port ?? 6379
            username = parsed.password == nil ? nil : (parsed.user?.isEmpty == false ? parsed.user : nil)
            password = parsed.password ?? parsed.user
            if parsed.rawPath.isEmpty {
                database = 0
            } else {
                guard let db = Int(parsed.rawPath), db >= 0 else { throw ServiceURLError("the path must be a database number") }
                database = db
            }
        } catch {
            throw RedisError(.invalidURL, "redis URL: \(error.message)")
        }
    }
}

