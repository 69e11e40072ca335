/// An IPv4 or IPv6 address as a value: one a host name resolved to, or one written in a URL.
/// IPv4 is a 32-bit number (127.0.0.1 is 0x7F00_0001); IPv6 is its 128 bits as two halves,
/// most significant first. `IPAddressScope` says whether it is a public (global unicast) one.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    case v6(high: UInt64, low: UInt64)

    /// An address in its text form (`192.0.2.1`, `::1`, `::ffff:10.0.0.1`), without brackets or
    /// a zone; nil for anything else, host names included.
    public init?(_ text: String) {
        guard let address = SocketAddress.parse(text) else { return nil }
        self = address
    }

    /// The standard text form (RFC 5952 for IPv6).
    public var description: String { SocketAddress.format(self) }
}

extension IPAddress {
    /// The IPv4 address an IPv4-mapped IPv6 one (`::ffff:192.0.2.1`) stands for, as a dual-stack
    /// socket reports IPv4 peers; any other address as it is.
    public var unmapped: IPAddress {
        if case let .v6(high, low) = self, high == 0, low >> 32 == 0xFFFF { return .v4(UInt32(truncatingIfNeeded: low)) }
        return self
    }
}
