/// Ids for jobs published without one: a random (version 4) UUID in lowercase, the form the
/// events use. Written straight from random bits: Foundation's UUID plus `lowercased()` cost more
/// than the rest of parsing a one-token job.
public enum JobID {
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var high = generator.next() as UInt64
        var low = generator.next() as UInt64
        high = (high & ~0xF000) | 0x4000                           // version 4
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 9562 variant
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, word) in [high, low].enumerated() {
            for nibble in 0..<16 {
                let position = index * 16 + nibble
                if position == 8 || position == 12 || position == 16 || position == 20 { text.append(UInt8(ascii: "-")) }
                text.append(digits[Int((word >> UInt64(60 - nibble * 4)) & 0xF)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
