import Synchronization

/// The `apns-id` of every request of one job attempt: one UUID in version-4 form (RFC 9562) whose
/// last eight hex digits count the job's devices. Events name each device's id, and job.completed
/// names the first and the last, so a person can look any of them up in Apple's delivery log.
public struct APNsIDRange: Sendable, Hashable {
    /// `xxxxxxxx-xxxx-4xxx-yxxx-xxxx`: the 28 characters the devices share.
    private let prefix: [UInt8]
    public let count: Int

    /// The prefix is a counter of job attempts (4 bytes) and 64 random bits drawn once per process:
    /// unique within the process by construction, across processes by the random half. Twelve
    /// getrandom calls per job (one per random byte) were 7% of a one-token job's CPU
    /// (`ops/bench --profile a`, crng_make_state in the kernel).
    public init(count: Int) {
        let attempt = Self.attempts.add(1, ordering: .relaxed).newValue
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
        precondition(count >= 0 && UInt64(count) <= UInt64(UInt32.max) + 1, "an apns-id range counts at most 2^32 devices")
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: high >> UInt64(56 - 8 * index)) }
        for index in 0..<4 { bytes[8 + index] = UInt8(truncatingIfNeeded: low >> UInt64(56 - 8 * index)) }
        bytes[6] = bytes[6] & 0x0f | 0x40           // version 4
        bytes[8] = bytes[8] & 0x3f | 0x80           // RFC variant
        var prefix = [UInt8]()
        prefix.reserveCapacity(28)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { prefix.append(UInt8(ascii: "-")) }
            prefix.append(Self.digits[Int(byte >> 4)])
            prefix.append(Self.digits[Int(byte & 0x0f)])
        }
        self.prefix = prefix
        self.count = count
    }

    /// The id of the device at `index` of the job's device list (one allocation: it runs per request).
    public func id(at index: Int) -> String {
        let counter = UInt32(truncatingIfNeeded: index)
        return String(unsafeUninitializedCapacity: 36) { buffer in
            for (offset, byte) in prefix.enumerated() { buffer[offset] = byte }
            for digit in 0..<8 {
                buffer[28 + digit] = Self.digits[Int(counter >> UInt32(28 - 4 * digit) & 0x0f)]
            }
            return 36
        }
    }

    public var first: String? { count > 0 ? id(at: 0) : nil }
    public var last: String? { count > 0 ? id(at: count - 1) : nil }

    private static let digits = Array("0123456789abcdef".utf8)
}
