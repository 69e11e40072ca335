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
        next(countingIn: counter)
    }

    /// The next id of `counter` (tests pass a counter of their own, started near its end).
    static func next(countingIn counter: borrowing Atomic<UInt64>) -> String {
        // Wraps rather than traps, though it never gets there: the 62 bits the id keeps repeat only
        // after 146,000 years at a million ids a second.
        let sequence = counter.wrappingAdd(1, ordering: .relaxed).newValue
        // RFC 9562 variant bits, then 62 bits of sequence.
        let low = (sequence & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return UUIDText.format(high: processBits, low: low)
    }
}
