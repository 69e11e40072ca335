import PushCore

/// The two URL forms with a host list, which the one-host ServiceURL does not read:
///   redis-sentinel://[[user]:password@]host1[:26379],host2[:26379]/master-name[/db][?sentinel_password=…]
///   redis-cluster://[[user]:password@]host1[:6379],host2[:6379][/0]
/// Each host entry is read by ServiceURL (same percent-decoding, IPv6 in brackets). Errors name
/// the part of the URL that is wrong and never repeat it (it may hold a password).
struct RedisHAURL {
    var topology: RedisTopology
    var username: String?
    var password: String?
    var database: Int

    static let sentinelScheme = "redis-sentinel"
    static let clusterScheme = "redis-cluster"

    static func isHA(_ url: String) -> Bool {
        url.hasPrefix(sentinelScheme + "://") || url.hasPrefix(clusterScheme + "://")
    }

    init(parsing url: String) throws(ServiceURLError) {
        let isSentinel = url.hasPrefix(Self.sentinelScheme + "://")
        var rest = Substring(url).dropFirst((isSentinel ? Self.sentinelScheme : Self.clusterScheme).count + 3)
        if rest.contains("#") { throw ServiceURLError("fragments are not supported") }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        username = nil
        password = nil
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                let user = try ServiceURL.percentDecoded(userInfo[..<colon], part: "user")
                username = user.isEmpty ? nil : user
                password = try ServiceURL.percentDecoded(userInfo[userInfo.index(after: colon)...], part: "password")
            } else {
                password = try ServiceURL.percentDecoded(userInfo, part: "password")
            }
        }
        let nodes = try Self.hosts(rest, defaultPort: isSentinel ? 26379 : 6379)
        if isSentinel {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard let first = parts.first, !first.isEmpty else {
                throw ServiceURLError("the master name (the path after the host list) is missing")
            }
            let masterName = try ServiceURL.percentDecoded(first, part: "master name")
            database = 0
            if parts.count == 2 {
                guard let db = Int(parts[1]), db >= 0 else { throw ServiceURLError("the database (after the master name) must be a number") }
                database = db
            } else if parts.count > 2 {
                throw ServiceURLError("the path must be /master-name or /master-name/db")
            }
            var sentinelPassword: String?
            for pair in query.split(separator: "&") {
                let (name, value) = pair.firstIndex(of: "=").map { (pair[..<$0], pair[pair.index(after: $0)...]) } ?? (pair, "")
                guard name == "sentinel_password" else {
                    throw ServiceURLError("unknown query parameter (only sentinel_password is read)")
                }
                sentinelPassword = try ServiceURL.percentDecoded(value, part: "sentinel_password")
            }
            topology = .sentinel(sentinels: nodes, masterName: masterName, sentinelPassword: sentinelPassword)
        } else {
            guard query.isEmpty else { throw ServiceURLError("query parameters are not supported for redis-cluster://") }
            guard path.isEmpty || path == "0" else {
                throw ServiceURLError("the database (path) must be 0 or absent: Redis Cluster has only database 0")
            }
            database = 0
            topology = .cluster(seeds: nodes)
        }
    }

    private static func hosts(_ list: Substring, defaultPort: Int) throws(ServiceURLError) -> [RedisNodeAddress] {
        var nodes: [RedisNodeAddress] = []
        for (index, entry) in list.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            do throws(ServiceURLError) {
                guard !entry.isEmpty else { throw ServiceURLError("empty") }
                let parsed = try ServiceURL(parsing: "redis://" + entry, schemes: ["redis"])
                guard parsed.user == nil, parsed.rawPath.isEmpty, !parsed.host.isEmpty else {
                    throw ServiceURLError("must be host or host:port")
                }
                nodes.append(RedisNodeAddress(host: parsed.host, port: parsed.port ?? defaultPort))
            } catch {
                throw ServiceURLError("host \(index + 1) of the host list: \(error.message)")
            }
        }
        return nodes
    }
}
