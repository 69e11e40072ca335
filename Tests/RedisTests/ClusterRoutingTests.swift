import Testing
@testable import Redis

@Suite struct ClusterRedirectTests {
    @Test func movedIsParsed() throws {
        let redirect = try #require(ClusterRedirect(errorText: "MOVED 3999 127.0.0.1:6381"))
        #expect(redirect == ClusterRedirect(kind: .moved, slot: 3999, address: RedisNodeAddress(host: "127.0.0.1", port: 6381)))
    }

    @Test func askIsParsed() throws {
        let redirect = try #require(ClusterRedirect(errorText: "ASK 3999 10.0.0.2:7002"))
        #expect(redirect.kind == .ask)
        #expect(redirect.slot == 3999)
        #expect(redirect.address == RedisNodeAddress(host: "10.0.0.2", port: 7002))
    }

    @Test func anIPv6TargetKeepsItsColons() throws {
        let redirect = try #require(ClusterRedirect(errorText: "MOVED 1 ::1:7000"))
        #expect(redirect.address == RedisNodeAddress(host: "::1", port: 7000))
    }

    /// The cluster spec lets a node leave the host out: it means the host of the node that answered.
    @Test func anEmptyHostIsTheAnsweringNodes() throws {
        let redirect = try #require(ClusterRedirect(errorText: "MOVED 12182 :7003"))
        #expect(redirect.target(answeredBy: RedisNodeAddress(host: "127.0.0.5", port: 7000)) == RedisNodeAddress(host: "127.0.0.5", port: 7003))
    }

    @Test(arguments: ["ERR unknown command", "MOVED", "MOVED 16384 127.0.0.1:7000", "MOVED x 127.0.0.1:7000",
                      "ASK 1 127.0.0.1", "MOVED 1 127.0.0.1:0", "WRONGTYPE Operation", "ASK 1 127.0.0.1:7000 extra"])
    func otherErrorsAreNotRedirects(text: String) {
        #expect(ClusterRedirect(errorText: text) == nil)
    }
}

@Suite struct ClusterSlotTableTests {
    static let node = RedisNodeAddress(host: "127.0.0.1", port: 7000)

    static func range(_ first: Int64, _ last: Int64, _ host: String, _ port: Int64, replica: Int64? = nil) -> RedisReply {
        var fields: [RedisReply] = [.integer(first), .integer(last), .array([.string(Array(host.utf8)), .integer(port), .string(Array("id".utf8))])]
        if let replica { fields.append(.array([.string(Array(host.utf8)), .integer(replica), .string(Array("id2".utf8))])) }
        return .array(fields)
    }

    @Test func slotsReplyMapsEverySlot() throws {
        let reply = RedisReply.array([
            Self.range(0, 5460, "127.0.0.1", 7000, replica: 7003),
            Self.range(5461, 10922, "127.0.0.1", 7001),
            Self.range(10923, 16383, "127.0.0.1", 7002),
        ])
        let table = try ClusterSlotTable(slotsReply: reply, answeredBy: Self.node)
        #expect(table.coveredSlots == 16384)
        #expect(table.nodes.map(\.port) == [7000, 7001, 7002])
        #expect(table.node(forSlot: 0)?.port == 7000)
        #expect(table.node(forSlot: 5461)?.port == 7001)
        #expect(table.node(forSlot: HashSlot.of(key: "foo"))?.port == 7002)       // 12182
    }

    @Test func anEmptyHostIsTheAnsweringNodeAndQuestionMarksAreSkipped() throws {
        let reply = RedisReply.array([Self.range(0, 99, "", 7005), Self.range(100, 199, "?", 7006)])
        let table = try ClusterSlotTable(slotsReply: reply, answeredBy: Self.node)
        #expect(table.node(forSlot: 50) == RedisNodeAddress(host: "127.0.0.1", port: 7005))
        #expect(table.node(forSlot: 150) == nil)
        #expect(table.coveredSlots == 100)
    }

    @Test func movedUpdatesOneSlot() throws {
        var table = try ClusterSlotTable(slotsReply: .array([Self.range(0, 16383, "127.0.0.1", 7000)]), answeredBy: Self.node)
        table.assign(12182...12182, to: RedisNodeAddress(host: "127.0.0.1", port: 7001))
        #expect(table.node(forSlot: 12182)?.port == 7001)
        #expect(table.node(forSlot: 12181)?.port == 7000)
    }

    @Test(arguments: [RedisReply.error("ERR This instance has cluster support disabled"), .array([.array([.integer(5), .integer(2)])]),
                      .array([Self.range(0, 16384, "h", 1)]), .array([Self.range(0, 1, "h", 0)])])
    func malformedRepliesAreRefused(reply: RedisReply) {
        #expect(throws: RedisError.self) { try ClusterSlotTable(slotsReply: reply, answeredBy: Self.node) }
    }

    @Test func commandsRouteByTheirOneKey() throws {
        #expect(try ClusterCommandKey.slot(of: ["SSCAN", "foo", "0", "COUNT", "1000"]) == 12182)
        #expect(try ClusterCommandKey.slot(of: ["DEL", "foo"]) == 12182)
        #expect(try ClusterCommandKey.slot(of: ["PING"]) == nil)
        #expect(try ClusterCommandKey.slot(of: ["CLUSTER", "SLOTS"]) == nil)
        // A script with exactly one key goes where that key lives.
        #expect(try ClusterCommandKey.slot(of: ["EVAL", "return redis.call('INCR', KEYS[1])", "1", "foo", "3600"]) == 12182)
    }

    @Test(arguments: [["DEL", "a", "b"], ["MGET", "a", "b"], ["SMOVE", "a", "b", "m"], ["EVAL", "return 1", "0"], ["EVAL", "return 1", "2", "a", "b"], ["SCAN", "0"]])
    func multiKeyCommandsAreRefused(arguments: [String]) {
        #expect { try ClusterCommandKey.slot(of: arguments) } throws: { ($0 as? RedisError)?.code == .unsupported }
    }
}
