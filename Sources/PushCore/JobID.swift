import Synchronization

/// Ids for jobs published without one, in the lowercase UUID form the events use: 64 random bits
/// drawn once per process, then a counter. Unique within the process by construction and across
/// processes by the random half; a fresh random UUID per job cost two getrandom calls each, more
/// than the rest of parsing a one-token job.
public enum JobID {
    private static let processBits: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next() & ~0xF000) | 0x4000   // the version nibble says 4 (random)
    }()
    private static let counter = Atomic<UInt64>(0)

    public static func next() -> String {
        let sequence = counter.add(1, ordering: .relaxed).newValue
        // RFC 9562 variant bits, then 62 bits of sequence.
        let low = (sequence & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        // Written straight into the String's storage: one allocation per job.
        return String(unsafeUninitializedCapacity: 36) { text in
            var count = 0
            for position in 0..<32 {
                if position == 8 || position == 12 || position == 16 || position == 20 {
                    text[count] = UInt8(ascii: "-")
                    count += 1
                }
                let word = position < 16 ? processBits : low
                let value = UInt8((word >> UInt64(60 - (position % 16) * 4)) & 0xF)
                text[count] = value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
                count += 1
            }
            return count
        }
    }
}
