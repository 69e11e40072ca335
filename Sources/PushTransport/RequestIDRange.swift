import Synchronization
import PushCore

/// The id of every request of one job attempt: one UUID in version-4 form (RFC 9562) whose last
/// eight hex digits count the job's devices. APNs carries it as `apns-id`; events name each
/// device's id, and job.completed names the first and the last, so a person can look any of them
/// up in Apple's delivery log (platforms that name a message themselves answer with their own).
public struct RequestIDRange: Sendable, Hashable {
    /// Bytes 0–7 and 8–11 of the UUID, version and variant set: the 28 characters
    /// `xxxxxxxx-xxxx-4xxx-yxxx-xxxx` the devices share, kept as numbers so that a job's range
    /// allocates nothing (two arrays per job before).
    private let high: UInt64
    private let low: UInt32
    public let count: Int
    /// Formatted once: every job sends with it and names it in job.completed (formatting it
    /// twice showed in a one-token job's instructions; measured:
    /// docs/evidence/code-measurements.md#request-ids).
    public let first: String?

    /// The prefix is a counter of job attempts (4 bytes) and 64 random bits drawn once per process:
    /// unique within the process by construction, across processes by the random half. A
    /// getrandom call per random byte of every job was a noticeable share of a one-token job's CPU
    /// (measured: docs/evidence/code-measurements.md#request-ids).
    public init(count: Int) {
        self.init(count: count, countingIn: Self.attempts)
    }

    /// The next attempt of `attempts` (tests pass a counter of their own, started near its end).
    ///
    /// The counter wraps after 2^32 attempts (`add` would trap and stop the process): 2.5 days at
    /// 20,000 jobs a second. An id then repeats one from 2^32 attempts before, whose requests
    /// ended long ago (an attempt lasts at most its request timeouts, seconds to minutes), so no
    /// two requests in flight share an id, and Apple's delivery log tells them apart by time.
    init(count: Int, countingIn attempts: borrowing Synchronization.Atomic<UInt32>) {
        let attempt = attempts.wrappingAdd(1, ordering: .relaxed).newValue
        self.init(count: count, high: UInt64(attempt) << 32 | Self.processBits >> 32, low: Self.processBits << 32 | 0xFFFF_FFFF)
    }

    /// A random prefix from `generator` (tests pass a seeded one).
    public init(count: Int, using generator: inout some RandomNumberGenerator) {
        self.init(count: count, high: generator.next(), low: generator.next())
    }

    private static let processBits: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()
    private static let attempts = Synchronization.Atomic<UInt32>(0)

    /// Takes bytes 0–7 from `high` and 8–11 from the top of `low`, then sets the version and variant.
    private init(count: Int, high: UInt64, low: UInt64) {
        precondition(count >= 0 && UInt64(count) <= UInt64(UInt32.max) + 1, "a request id range counts at most 2^32 devices")
        self.high = high & ~0x0000_0000_0000_F000 | 0x0000_0000_0000_4000    // byte 6's high nibble: version 4
        self.low = UInt32(truncatingIfNeeded: low >> 32) & 0x3FFF_FFFF | 0x8000_0000   // byte 8's top bits: RFC variant
        self.count = count
        first = count > 0 ? UUIDText.format(high: self.high, low: UInt64(self.low) << 32) : nil
    }

    /// The id of the device at `index` of the job's device list (one allocation: it runs per request).
    public func id(at index: Int) -> String {
        if index == 0, let first { return first }
        return UUIDText.format(high: high, low: UInt64(low) << 32 | UInt64(UInt32(truncatingIfNeeded: index)))
    }

    public var last: String? { count > 0 ? id(at: count - 1) : nil }
}
