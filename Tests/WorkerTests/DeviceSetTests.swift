import PushCore
import Testing
@testable import Worker

@Suite struct DeviceSetTests {
    private static func token(_ number: Int, width: Int = 64) -> DeviceToken {
        let digits = String(number, radix: 16)
        return DeviceToken(trustedHex: String(repeating: "0", count: width - digits.count) + digits)
    }

    /// `insert`'s answers in order (`#expect` cannot call a mutating method itself).
    private static func insert(_ tokens: [DeviceToken], into set: inout DeviceSet) -> [Bool] {
        tokens.map { set.insert($0) }
    }

    @Test func aDeviceIsNewOnceWhateverItsSpelling() throws {
        var set = DeviceSet()
        let lower = try DeviceToken(validating: String(repeating: "ab", count: 32))
        let upper = try DeviceToken(validating: String(repeating: "AB", count: 32))
        #expect(Self.insert([lower, upper, lower], into: &set) == [true, false, false])
        #expect(set.count == 1)
    }

    @Test func theAllZeroTokenIsADeviceLikeAnyOther() {
        var set = DeviceSet()
        #expect(Self.insert([Self.token(0), Self.token(0), Self.token(1)], into: &set) == [true, false, true])
        #expect(set.count == 2)
    }

    @Test func longerTokensAreKeptApartFromShortOnesWithTheSameDigits() {
        var set = DeviceSet()
        let short = Self.token(7), long = Self.token(7, width: 160)
        #expect(Self.insert([short, long, long], into: &set) == [true, true, false])
        #expect(set.count == 2)
    }

    /// More devices than reserved: the table grows and keeps every device it had.
    @Test func growingPastTheReservationLosesNothing() {
        var set = DeviceSet()
        set.reserveCapacity(10)
        let tokens = (0..<50_000).map { Self.token($0 * 7919) }
        #expect(Self.insert(tokens, into: &set).allSatisfy { $0 })
        #expect(Self.insert(tokens, into: &set).allSatisfy { !$0 })
        #expect(set.count == 50_000)
    }
}

@Suite struct CompactKeyTableTests {
    private static func key(_ number: UInt64) -> CompactKeyTable.Key {
        CompactKeyTable.Key(a: number, b: number &* 31, c: 0, d: ~number)
    }

    private static func insert(_ keys: [CompactKeyTable.Key], into table: inout CompactKeyTable) -> [Bool] {
        keys.map { table.insert($0) }
    }

    /// The point of the table: a million keys in 1.14M slots of 32 bytes (36.6 MB), where `Set`
    /// takes 2^21 (67 MB). Filling up to the reservation never grows it.
    @Test func aReservedTableFillsToItsReservationWithoutGrowing() {
        var table = CompactKeyTable()
        table.reserveCapacity(100_000)
        #expect(table.slotCount == 114_286)
        let keys = (1...100_000).map { Self.key(UInt64($0)) }
        #expect(Self.insert(keys, into: &table).allSatisfy { $0 })
        #expect(table.slotCount == 114_286)
        #expect(table.count == 100_000)
        #expect(keys.allSatisfy { table.contains($0) })
        #expect(!table.contains(Self.key(100_001)))
        #expect(Self.insert([Self.key(100_001)], into: &table) == [true])
        #expect(table.slotCount == 228_572)
        #expect(table.count == 100_001)
        #expect(keys.allSatisfy { table.contains($0) })
    }

    /// Sized from SCARD, filled from SSCAN, which may return a member twice: a duplicate arriving
    /// when the table is exactly at its load limit must not double it.
    @Test func aDuplicateAtTheLoadLimitDoesNotGrowTheTable() {
        var table = CompactKeyTable()
        table.reserveCapacity(100_000)
        let slots = table.slotCount
        let limit = slots * CompactKeyTable.maxLoadNumerator / CompactKeyTable.maxLoadDenominator
        let keys = (1...limit).map { Self.key(UInt64($0)) }
        #expect(Self.insert(keys, into: &table).allSatisfy { $0 })
        #expect(table.slotCount == slots)
        #expect(Self.insert([keys[0], keys[limit / 2], keys[limit - 1]], into: &table) == [false, false, false])
        #expect(table.slotCount == slots, "a key already there never grows the table")
        #expect(table.count == limit)
        #expect(Self.insert([Self.key(UInt64(limit + 1))], into: &table) == [true])
        #expect(table.slotCount > slots, "a new key past the limit does")
        #expect(keys.allSatisfy { table.contains($0) })
    }

    @Test func anEmptyTableHoldsNothingAndGrowsOnFirstInsert() {
        var table = CompactKeyTable()
        #expect(!table.contains(Self.key(5)))
        #expect(!table.contains(.zero))
        #expect(Self.insert([Self.key(5)], into: &table) == [true])
        #expect(table.slotCount == CompactKeyTable.minimumSlots)
        #expect(table.contains(Self.key(5)))
        #expect(Self.insert([.zero, .zero], into: &table) == [true, false])
        #expect(table.count == 2)
    }

    /// Keys that differ in one word only are different keys.
    @Test func keysThatShareThreeWordsAreDistinct() {
        var table = CompactKeyTable()
        let variants = [
            CompactKeyTable.Key(a: 1, b: 2, c: 3, d: 4), CompactKeyTable.Key(a: 9, b: 2, c: 3, d: 4),
            CompactKeyTable.Key(a: 1, b: 9, c: 3, d: 4), CompactKeyTable.Key(a: 1, b: 2, c: 9, d: 4),
            CompactKeyTable.Key(a: 1, b: 2, c: 3, d: 9),
        ]
        #expect(Self.insert(variants, into: &table) == Array(repeating: true, count: 5))
        #expect(Self.insert(variants, into: &table) == Array(repeating: false, count: 5))
        #expect(table.count == 5)
    }
}
