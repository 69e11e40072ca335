import Testing
import Redis

/// Against the examples of the Redis cluster specification ("Keys distribution model", "Hash tags",
/// and its CRC16 reference: "123456789" → 0x31C3).
@Suite struct HashSlotTests {
    @Test func crc16IsXmodem() {
        #expect(HashSlot.crc16(Array("123456789".utf8)[...]) == 0x31C3)
    }

    @Test func slotOfFooIs12182() {
        #expect(HashSlot.of(key: "foo") == 12182)
        #expect(HashSlot.of(key: "bar") == 5061)
    }

    @Test func aHashTagPutsKeysInOneSlot() {
        #expect(HashSlot.of(key: "{user1000}.following") == HashSlot.of(key: "{user1000}.followers"))
        #expect(HashSlot.of(key: "{user1000}.following") == HashSlot.of(key: "user1000"))
        #expect(HashSlot.of(key: "group:{news}:a") == HashSlot.of(key: "group:{news}:b"))
    }

    /// The spec's edge cases: an empty tag hashes the whole key; only the first `{` and the first
    /// `}` after it count.
    @Test func hashTagEdgeCases() {
        #expect(HashSlot.of(key: "foo{}{bar}") == Int(HashSlot.crc16(Array("foo{}{bar}".utf8)[...]) % 16384))
        #expect(HashSlot.of(key: "foo{{bar}}zap") == HashSlot.of(key: "{bar"))
        #expect(HashSlot.of(key: "foo{bar}{zap}") == HashSlot.of(key: "bar"))
        #expect(HashSlot.of(key: "foo{bar") == Int(HashSlot.crc16(Array("foo{bar".utf8)[...]) % 16384))
    }

    /// What `CLUSTER KEYSLOT` answers on a Redis 7.0 cluster node.
    @Test func slotsAsRedisComputesThem() {
        #expect(HashSlot.of(key: "{user1000}.following") == 3443)
        #expect(HashSlot.of(key: "foo{}{bar}") == 8363)
        #expect(HashSlot.of(key: "foo{{bar}}zap") == 4015)
    }

    @Test func everySlotIsInRange() {
        for index in 0..<2000 {
            #expect((0..<16384).contains(HashSlot.of(key: "group:default:g\(index)")))
        }
    }
}
