import PushCore

/// Random (version 4) UUID strings from a per-connection SplitMix64 generator: `apns-unique-id`
/// needs uniqueness, not secrecy, and a getrandom call per response would cost more than the answer.
struct SandboxUUIDGenerator {
    private var state: UInt64

    init() {
        var system = SystemRandomNumberGenerator()
        self.state = system.next()
    }

    private mutating func next64() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15   // SplitMix64 steps modulo 2^64: the wrap is the algorithm
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Lowercase `8-4-4-4-12`.
    mutating func next() -> String {
        let high = (self.next64() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let low = (self.next64() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return UUIDText.format(high: high, low: low)
    }
}

enum SandboxUUID {
    /// APNs accepts `apns-id` only as a canonical `8-4-4-4-12` hex UUID.
    static func isCanonical(_ value: String) -> Bool {
        var count = 0
        for (offset, byte) in value.utf8.enumerated() {
            count += 1
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !byte.isHexDigit {
                return false
            }
        }
        return count == 36
    }
}
