import Testing
import Redis

@Suite struct RedisHAURLTests {
    @Test func sentinelURLIsRead() throws {
        let configuration = try RedisConfiguration(url: "redis-sentinel://:p%40ss@10.0.0.1:26379,10.0.0.2,[::1]:26400/mymaster/2?sentinel_password=s3")
        #expect(configuration.topology == .sentinel(
            sentinels: [RedisNodeAddress(host: "10.0.0.1", port: 26379), RedisNodeAddress(host: "10.0.0.2", port: 26379),
                        RedisNodeAddress(host: "::1", port: 26400)],
            masterName: "mymaster", sentinelPassword: "s3"))
        #expect(configuration.password == "p@ss")
        #expect(configuration.username == nil)
        #expect(configuration.database == 2)
        #expect(configuration.host == "10.0.0.1")
    }

    @Test func sentinelDefaultsAreDatabase0AndNoSentinelPassword() throws {
        let configuration = try RedisConfiguration(url: "redis-sentinel://app:pw@s1/cache")
        #expect(configuration.topology == .sentinel(sentinels: [RedisNodeAddress(host: "s1", port: 26379)], masterName: "cache", sentinelPassword: nil))
        #expect(configuration.username == "app")
        #expect(configuration.password == "pw")
        #expect(configuration.database == 0)
    }

    @Test func clusterURLIsRead() throws {
        let configuration = try RedisConfiguration(url: "redis-cluster://:pw@127.0.0.1:7000,127.0.0.1:7001,node3")
        #expect(configuration.topology == .cluster(seeds: [RedisNodeAddress(host: "127.0.0.1", port: 7000), RedisNodeAddress(host: "127.0.0.1", port: 7001),
                                                          RedisNodeAddress(host: "node3", port: 6379)]))
        #expect(configuration.password == "pw")
        #expect(try RedisConfiguration(url: "redis-cluster://h:7000/0").database == 0)
    }

    @Test func plainRedisStaysStandalone() throws {
        #expect(try RedisConfiguration(url: "redis://h:1/0").topology == .standalone)
    }

    /// Each refusal names the part of the URL that is wrong, and never the password.
    @Test(arguments: [
        ("redis-sentinel://:hunter2secret@h1:26379", "master name"),
        ("redis-sentinel://:hunter2secret@h1:26379/", "master name"),
        ("redis-sentinel://:hunter2secret@h1:26379,,h2/m", "host 2 of the host list"),
        ("redis-sentinel://:hunter2secret@h1:26379,h2:99999/m", "host 2 of the host list: the port"),
        ("redis-sentinel://:hunter2secret@h1/m/x", "database"),
        ("redis-sentinel://:hunter2secret@h1/m/1/2", "path"),
        ("redis-sentinel://:hunter2secret@h1/m?password=x", "query parameter"),
        ("redis-sentinel://:hunter2%zzsecret@h1/m", "password"),
        ("redis-sentinel://:hunter2secret@/m", "host 1 of the host list"),
        ("redis-cluster://:hunter2secret@h1:7000/3", "database"),
        ("redis-cluster://:hunter2secret@h1:7000?x=1", "query"),
        ("redis-cluster://:hunter2secret@h1:7000,h2:x", "host 2 of the host list: the port"),
        ("redis-cluster://:hunter2secret@", "host 1 of the host list"),
        ("http://:hunter2secret@h1", "redis-sentinel://"),
    ])
    func refusalsNameThePart(url: String, part: String) {
        #expect {
            try RedisConfiguration(url: url)
        } throws: { error in
            let text = String(describing: error)
            return text.contains(part) && !text.contains("hunter2secret") && (error as? RedisError)?.code == .invalidURL
        }
    }
}
