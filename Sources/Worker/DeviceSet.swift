import PushCore

/// Remembers which devices a fan-out already produced, compactly: a million 64-hex tokens as
/// 32-byte keys take ~50 MB where a Set<String> would take three times that.
struct DeviceSet {
    private struct Key256: Hashable {
        var a: UInt64, b: UInt64, c: UInt64, d: UInt64
    }
    private var compact = Set<Key256>()
    private var other = Set<String>()

    var count: Int { compact.count + other.count }

    /// Sized up front (from SCARD) the set never rehashes while it fills: growing from a million
    /// to two million slots held both tables at once, the fan-out's memory peak.
    mutating func reserveCapacity(_ devices: Int) {
        compact.reserveCapacity(devices)
    }

    /// Inserts the token; returns false if it was already there.
    mutating func insert(_ token: DeviceToken) -> Bool {
        if let key = Self.key(token.hex) { return compact.insert(key).inserted }
        return other.insert(token.hex).inserted
    }

    private static func key(_ hex: String) -> Key256? {
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
        return Key256(a: words.0, b: words.1, c: words.2, d: words.3)
    }
}
