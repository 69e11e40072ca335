import Testing
import Redis

@Suite struct RedisURLTests {
    @Test func everyPartIsRead() throws {
        let configuration = try RedisConfiguration(url: "redis://app:p%40ss@10.0.0.7:6390/3")
        #expect(configuration.host == "10.0.0.7")
        #expect(configuration.port == 6390)
        #expect(configuration.username == "app")
        #expect(configuration.password == "p@ss")
        #expect(configuration.database == 3)
    }

    @Test func defaultsAreLoopbackPort6379AndDatabase0() throws {
        let configuration = try RedisConfiguration(url: "redis://")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 6379)
        #expect(configuration.database == 0)
        #expect(configuration.password == nil)
    }

    /// A URL that is refused is not echoed: its password would end up in logs.
    @Test(arguments: ["rediss://:hunter2secret@cache.example:6380/0", "http://user:hunter2secret@cache.example", "user:hunter2secret@cache.example"])
    func aRefusedURLNeverShowsItsPassword(url: String) {
        #expect {
            try RedisConfiguration(url: url)
        } throws: { error in
            let text = String(describing: error)
            return !text.contains("hunter2secret") && text.contains("redis://")
        }
    }

    @Test func aRedissURLSaysWhyTLSIsMissing() {
        #expect {
            try RedisConfiguration(url: "rediss://:pw@cache.example:6380")
        } throws: { error in
            String(describing: error).contains("\"rediss://\"") && String(describing: error).contains("hiredis 1.x")
        }
    }

    @Test(arguments: ["redis://host:0", "redis://host:70000", "redis://host/x", "redis://host/-1"])
    func badPortsAndDatabasesAreRefused(url: String) {
        #expect(throws: RedisError.self) { try RedisConfiguration(url: url) }
    }
}

extension RedisURLTests {
    /// The same percent-decoding as AMQP's (one parser): a bad %xx is an error, not kept as text.
    @Test func aBadPercentEncodingIsRefused() {
        #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis://:pa%zzss@127.0.0.1") }
    }

    @Test func aLonePasswordBeforeTheAtSign() throws {
        let configuration = try RedisConfiguration(url: "redis://secret@127.0.0.1")
        #expect(configuration.password == "secret")
        #expect(configuration.username == nil)
    }
}
