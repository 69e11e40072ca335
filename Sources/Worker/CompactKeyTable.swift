/// A set of 32-byte keys, written here for memory rather than taken from the standard library:
/// `Set` keeps at most 3/4 of a power-of-two table filled, so a million keys took 2^21 slots, most
/// of a large fan-out's peak RSS. This table is sized from the expected count and filled up to 7/8
/// (measured: docs/evidence/code-measurements.md#fan-out-key-table). Open addressing with linear
/// probing; the all-zero key marks an empty slot, so the zero key itself is kept in a flag.
/// Positions come from the standard `Hasher` (seeded per process), so chosen keys cannot force
/// long probe runs.
struct CompactKeyTable {
    struct Key: Equatable {
        var a: UInt64, b: UInt64, c: UInt64, d: UInt64
        static let zero = Key(a: 0, b: 0, c: 0, d: 0)
    }

    /// At most 7 of every 8 slots used: an insert into a table that full probes ~32 slots on
    /// average (linear probing, ½(1 + 1/(1 − α)²)), consecutive ones, a few cache lines; over the
    /// whole fill far fewer. 4/5 left a 1M-device fan-out with no margin under its peak RSS
    /// target (measured: docs/evidence/code-measurements.md#fan-out-key-table).
    static let maxLoadNumerator = 7
    static let maxLoadDenominator = 8
    static let minimumSlots = 16

    private var slots: [Key] = []
    private var used = 0
    private var containsZero = false

    var count: Int { used + (containsZero ? 1 : 0) }
    /// How many slots the table holds now (for tests of its sizing).
    var slotCount: Int { slots.count }

    /// Makes room for `keys` keys in all, so that filling up to it never rehashes.
    mutating func reserveCapacity(_ keys: Int) {
        let needed = Self.slots(for: keys)
        if needed > slots.count { rehash(slotCount: needed) }
    }

    /// Inserts the key; returns false if it was already there. Membership is settled before the
    /// load: the table is sized from SCARD and SSCAN may return a member twice, so a duplicate
    /// arriving at the load limit must not double the table (a new table beside the old one at the
    /// peak; sizes in docs/evidence/code-measurements.md#fan-out-key-table).
    mutating func insert(_ key: Key) -> Bool {
        if key == .zero {
            defer { containsZero = true }
            return !containsZero
        }
        let hash = Self.hash(of: key)
        var index = 0
        if !slots.isEmpty {
            index = Self.position(of: hash, slotCount: slots.count)
            while true {
                let occupant = slots[index]
                if occupant == .zero { break }
                if occupant == key { return false }
                index += 1
                if index == slots.count { index = 0 }
            }
        }
        if slots.isEmpty || (used + 1) * Self.maxLoadDenominator > slots.count * Self.maxLoadNumerator {
            rehash(slotCount: max(slots.count * 2, Self.slots(for: used + 1)))
            index = emptySlot(from: Self.position(of: hash, slotCount: slots.count))
        }
        slots[index] = key
        used += 1
        return true
    }

    func contains(_ key: Key) -> Bool {
        if key == .zero { return containsZero }
        guard !slots.isEmpty else { return false }
        var index = Self.position(of: Self.hash(of: key), slotCount: slots.count)
        while true {
            let occupant = slots[index]
            if occupant == key { return true }
            if occupant == .zero { return false }
            index += 1
            if index == slots.count { index = 0 }
        }
    }

    private static func slots(for keys: Int) -> Int {
        let wanted = (max(keys, 1) * maxLoadDenominator + maxLoadNumerator - 1) / maxLoadNumerator
        return max(wanted, minimumSlots)
    }

    /// Computed once per insert: a new key is placed after a rehash without hashing it again.
    private static func hash(of key: Key) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key.a)
        hasher.combine(key.b)
        hasher.combine(key.c)
        hasher.combine(key.d)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// Maps the hash onto 0..<slotCount with a multiply (any table size, no modulo).
    private static func position(of hash: UInt64, slotCount: Int) -> Int {
        Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(slotCount)).high)
    }

    /// The first empty slot from `index` on (there is always one: the load stays below 1).
    private func emptySlot(from index: Int) -> Int {
        var index = index
        while slots[index] != .zero {
            index += 1
            if index == slots.count { index = 0 }
        }
        return index
    }

    private mutating func rehash(slotCount: Int) {
        let old = slots
        slots = Array(repeating: .zero, count: slotCount)
        for key in old where key != .zero {
            let index = emptySlot(from: Self.position(of: Self.hash(of: key), slotCount: slotCount))
            slots[index] = key
        }
    }
}
