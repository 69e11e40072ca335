/// A block of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`), or a single address
/// (`::1` is `::1/128`). Written with host bits set (`10.1.2.3/8`), it is the block that holds them.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The block's first address (host bits cleared).
    public let address: IPAddress
    public let prefixLength: Int

    /// nil for anything that is not an address with an optional `/length` (0–32 for IPv4, 0–128 for IPv6).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let bits = if case .v4 = address { 32 } else { 128 }
        var length = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let written = Int(parts[1]), written <= bits else { return nil }
            length = written
        }
        self.address = Self.masked(address, length)
        prefixLength = length
    }

    /// Whether `address` is in the block; an IPv4 address is never in an IPv6 block, nor the other way round.
    public func contains(_ address: IPAddress) -> Bool {
        switch (address, self.address) {
        case (.v4, .v4), (.v6, .v6): Self.masked(address, prefixLength) == self.address
        default: false
        }
    }

    public var description: String { "\(address)/\(prefixLength)" }

    private static func masked(_ address: IPAddress, _ length: Int) -> IPAddress {
        switch address {
        case let .v4(value):
            return .v4(length == 0 ? 0 : value & (UInt32.max << (32 - length)))
        case let .v6(high, low):
            let highMask: UInt64 = length == 0 ? 0 : length >= 64 ? .max : .max << (64 - length)
            let lowMask: UInt64 = length <= 64 ? 0 : length == 128 ? .max : .max << (128 - length)
            return .v6(high: high & highMask, low: low & lowMask)
        }
    }
}
