/// Redis Cluster's key → hash slot mapping (Redis cluster specification, "Keys distribution
/// model" and "Hash tags"): CRC16 (XMODEM: polynomial 0x1021, initial value 0, no reflection) of
/// the key, or of its hash tag, modulo 16384.
public enum HashSlot {
    public static let count = 16384

    public static func of(key: String) -> Int { of(key: Array(key.utf8)) }

    /// Only the part between the first `{` and the next `}` is hashed, when that part is not
    /// empty: `{user1000}.following` and `{user1000}.followers` share a slot, `foo{}{bar}` hashes whole.
    public static func of(key: [UInt8]) -> Int {
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
           let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 {
            return Int(crc16(key[(open + 1)..<close]) % UInt16(count))
        }
        return Int(crc16(key[...]) % UInt16(count))
    }

    public static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}
