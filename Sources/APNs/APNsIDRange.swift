/// The `apns-id` of every request of one job attempt: one random UUID (version 4, RFC 9562) whose
/// last eight hex digits count the job's devices. Events name each device's id, and job.completed
/// names the first and the last, so a person can look any of them up in Apple's delivery log.
public struct APNsIDRange: Sendable, Hashable {
    /// `xxxxxxxx-xxxx-4xxx-yxxx-xxxx`: the 28 characters the devices share.
    private let prefix: [UInt8]
    public let count: Int

    public init(count: Int) {
        var generator = SystemRandomNumberGenerator()
        self.init(count: count, using: &generator)
    }

    public init(count: Int, using generator: inout some RandomNumberGenerator) {
        precondition(count >= 0 && UInt64(count) <= UInt64(UInt32.max) + 1, "an apns-id range counts at most 2^32 devices")
        var bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
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
