import PushCore

/// Remembers which devices a fan-out already produced, compactly. 64-hex tokens (what APNs issues
/// today) are kept as 32-byte keys in `CompactKeyTable`; any longer token as its text.
struct DeviceSet {
    private var compact = CompactKeyTable()
    private var other = Set<String>()

    var count: Int { compact.count + other.count }

    /// Sized up front (from SCARD) the table never rehashes while it fills: growing holds the old
    /// and the new table at once, the fan-out's memory peak.
    mutating func reserveCapacity(_ devices: Int) {
        compact.reserveCapacity(devices)
    }

    /// Inserts the token; returns false if it was already there.
    mutating func insert(_ token: DeviceToken) -> Bool {
        if let key = Self.key(token.identity) { return compact.insert(key) }
        return other.insert(token.identity).inserted
    }

    private static func key(_ hex: String) -> CompactKeyTable.Key? {
        guard hex.utf8.count == 64 else { return nil }
        // Four words in locals: this runs for every member of a fan-out, so no array per token.
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var index = 0
        for byte in hex.utf8 {
            let nibble: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = UInt64(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
            switch index / 16 {
            case 0: words.0 = words.0 << 4 | nibble
            case 1: words.1 = words.1 << 4 | nibble
            case 2: words.2 = words.2 << 4 | nibble
            default: words.3 = words.3 << 4 | nibble
            }
            index += 1
        }
        return CompactKeyTable.Key(a: words.0, b: words.1, c: words.2, d: words.3)
    }
}
