import Testing
import Redis

@Suite struct SentinelRepliesTests {
    @Test func masterAddressIsHostAndPort() throws {
        let reply = RedisReply.array([.string(Array("127.0.0.1".utf8)), .string(Array("6392".utf8))])
        #expect(try SentinelReplies.masterAddress(reply, masterName: "mymaster") == RedisNodeAddress(host: "127.0.0.1", port: 6392))
    }

    /// A sentinel that does not monitor the name answers a null array: ask the next one.
    @Test func anUnknownMasterIsNil() throws {
        #expect(try SentinelReplies.masterAddress(.null, masterName: "mymaster") == nil)
    }

    @Test func anErrorReplyIsAReplyError() {
        #expect { try SentinelReplies.masterAddress(.error("NOAUTH Authentication required."), masterName: "m") } throws: {
            ($0 as? RedisError)?.code == .reply && String(describing: $0).contains("NOAUTH")
        }
    }

    @Test(arguments: [RedisReply.array([.string(Array("h".utf8))]), .array([.string(Array("h".utf8)), .string(Array("x".utf8))]),
                      .array([.string([]), .string(Array("6379".utf8))]), .integer(1)])
    func malformedAddressesAreRefused(reply: RedisReply) {
        #expect { try SentinelReplies.masterAddress(reply, masterName: "m") } throws: { ($0 as? RedisError)?.code == .unexpectedReply }
    }

    @Test func roleIsTheFirstElement() throws {
        #expect(try SentinelReplies.role(.array([.string(Array("master".utf8)), .integer(3129659), .array([])])) == "master")
        #expect(try SentinelReplies.role(.array([.string(Array("slave".utf8)), .string(Array("127.0.0.1".utf8)), .integer(6391)])) == "slave")
        #expect(throws: RedisError.self) { try SentinelReplies.role(.integer(0)) }
    }

    @Test func readonlyAndMasterdownMeanTheMasterChanged() {
        #expect(SentinelReplies.meansMasterChanged("READONLY You can't write against a read only replica."))
        #expect(SentinelReplies.meansMasterChanged("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."))
        #expect(!SentinelReplies.meansMasterChanged("WRONGTYPE Operation against a key holding the wrong kind of value"))
    }
}
