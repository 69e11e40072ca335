import PushCore

/// Where Redis is and how long to wait for it. `redis://[[user]:password@]host[:port][/db]`.
public struct RedisConfiguration: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: Int
    public var connectTimeout: Duration = .seconds(5)
    public var commandTimeout: Duration = .seconds(5)

    public init(url: String) throws(RedisError) {
        if url.hasPrefix("rediss://") {
            throw RedisError(.invalidURL, "redis URL must start with redis:// (got \"rediss://\"); TLS to Redis (rediss://) needs hiredis 1.x, which Debian 12 lacks: reach a TLS-only Redis through a local TLS tunnel (stunnel, spiped)")
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

