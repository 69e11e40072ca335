import Redis
import Testing
import Worker
@testable import WorkerConfigurationFile

/// `redis.url` takes the Sentinel and Cluster forms too (docs/guides/redis-ha.md), refuses them by part,
/// and the effective configuration masks both passwords.
@Suite struct RedisURLSettingTests {
    func load(_ url: String) throws -> WorkerConfiguration {
        let material = try TestMaterial()
        defer { material.remove() }
        let text = "redis:\n  url: \"\(url)\"\napps:\n" + ConfigurationFileTests.tokenApp(keyFile: try material.tokenKey())
        let file = try ConfigurationFileReader.parse(text, path: "pushworker.yaml")
        return try ConfigurationLoader.load(file, environment: [:]).worker
    }

    @Test func sentinelAndClusterURLsAreRead() throws {
        let sentinel = try load("redis-sentinel://:pw@127.0.0.1:26391,127.0.0.1:26392/mymaster/1")
        #expect(sentinel.redis.topology == .sentinel(sentinels: [RedisNodeAddress(host: "127.0.0.1", port: 26391), RedisNodeAddress(host: "127.0.0.1", port: 26392)],
                                                     masterName: "mymaster", sentinelPassword: nil))
        #expect(sentinel.redis.database == 1)
        let cluster = try load("redis-cluster://127.0.0.1:7391,127.0.0.1:7392")
        #expect(cluster.redis.topology == .cluster(seeds: [RedisNodeAddress(host: "127.0.0.1", port: 7391), RedisNodeAddress(host: "127.0.0.1", port: 7392)]))
    }

    @Test func aBadURLIsAFindingAtRedisURLNamingThePart() {
        #expect {
            try load("redis-sentinel://:hunter2secret@127.0.0.1:26391")
        } throws: { error in
            let text = "\(error)"
            return text.contains("redis.url") && text.contains("master name") && !text.contains("hunter2secret")
        }
    }

    @Test func bothPasswordsAreMasked() {
        let masked = EffectiveConfigurationText.maskingPassword(in: "redis-sentinel://:datapw@h1,h2/m?sentinel_password=sentpw")
        #expect(masked == "redis-sentinel://:***@h1,h2/m?sentinel_password=***")
        #expect(EffectiveConfigurationText.maskingPassword(in: "redis://:pw@h:1/0") == "redis://:***@h:1/0")
    }
}
