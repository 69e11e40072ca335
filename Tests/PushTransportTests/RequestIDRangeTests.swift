@testable import PushTransport
import Synchronization
import Testing

@Suite("RequestIDRange")
struct RequestIDRangeTests {
    private struct Counting: RandomNumberGenerator {
        var state: UInt64 = 0x0123_4567_89ab_cdef
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state
        }
    }

    @Test("canonical version-4 UUIDs whose last eight hex digits count the devices")
    func format() throws {
        var generator = Counting()
        let range = RequestIDRange(count: 300, using: &generator)
        let canonical = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/
        for index in [0, 1, 255, 299] {
            let id = range.id(at: index)
            #expect(id.wholeMatch(of: canonical) != nil, "\(id)")
            #expect(UInt32(id.suffix(8), radix: 16) == UInt32(index))
            #expect(id.prefix(28) == range.id(at: 0).prefix(28))
        }
        #expect(range.first == range.id(at: 0))
        #expect(range.last == range.id(at: 299))
        #expect(RequestIDRange(count: 0).first == nil)
    }

    @Test("two attempts never share a range")
    func distinct() {
        let ids = Set((0..<1000).map { _ in RequestIDRange(count: 1).id(at: 0) })
        #expect(ids.count == 1000)
    }

    /// Attempts in one process count in the first eight hex digits and share the random middle.
    @Test("attempts of one process: a counter, then the process's random bits")
    func countedWithinAProcess() throws {
        let first = try #require(RequestIDRange(count: 1).first), second = try #require(RequestIDRange(count: 1).first)
        let canonical = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/
        #expect(first.wholeMatch(of: canonical) != nil && second.wholeMatch(of: canonical) != nil)
        let firstCount = try #require(UInt32(first.prefix(8), radix: 16))
        // Other tests may take attempts in between: later, not necessarily next.
        #expect(try #require(UInt32(second.prefix(8), radix: 16)) > firstCount)
        #expect(first.dropFirst(8).prefix(20) == second.dropFirst(8).prefix(20))
    }

    /// 2^32 attempts are 2.5 days at 20,000 jobs a second: the counter goes on from 0.
    @Test("the attempt counter wraps at 2^32 instead of stopping the process")
    func attemptCounterWraps() throws {
        let attempts = Synchronization.Atomic<UInt32>(UInt32.max - 1)
        let ids = try (0..<3).map { _ in try #require(RequestIDRange(count: 2, countingIn: attempts).first) }
        #expect(ids.map { String($0.prefix(8)) } == ["ffffffff", "00000000", "00000001"])
        #expect(Set(ids).count == 3)
        #expect(attempts.load(ordering: .relaxed) == 1)
    }
}
