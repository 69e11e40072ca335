/// What kind of address an `IPAddress` is, after IANA's special-purpose address registries
/// (RFC 6890 and the RFCs that update it): `global` when the public internet routes it, otherwise
/// what it names instead (this host, a private or link-local network, a group, documentation, or
/// nothing one may connect to). A client that must stay on the public internet (Web Push, whose
/// endpoints anyone writes) connects to `global` addresses only.
///
/// An IPv6 address that carries an IPv4 one (`::ffff:10.0.0.1`, `::10.0.0.1`, NAT64's
/// `64:ff9b::10.0.0.1`, 6to4's `2002:0a00:0001::`) is what its IPv4 address is: connecting to it
/// reaches that address. IPv6 outside 2000::/3 (global unicast) is never global.
public enum IPAddressScope: Sendable, Hashable, CustomStringConvertible {
    case global
    /// 0.0.0.0 and `::`: Linux connects them to this host.
    case unspecified
    /// 0.0.0.0/8.
    case thisNetwork
    /// 127.0.0.0/8, `::1`.
    case loopback
    /// 10/8, 172.16/12, 192.168/16 (RFC 1918).
    case privateUse
    /// 100.64/10, carrier-grade NAT (RFC 6598).
    case sharedAddressSpace
    /// 169.254/16 (where clouds serve instance metadata), fe80::/10.
    case linkLocal
    /// fc00::/7 (RFC 4193).
    case uniqueLocal
    /// fec0::/10, deprecated (RFC 3879) and never routed publicly.
    case siteLocal
    /// 224/4, ff00::/8.
    case multicast
    /// 255.255.255.255.
    case broadcast
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24 (RFC 5737); 2001:db8::/32 and 3fff::/20 (RFC 9637).
    case documentation
    /// 198.18/15 (RFC 2544), 2001:2::/48 (RFC 5180).
    case benchmarking
    /// Everything else not routed publicly: 240/4, 192.0.0/24, 192.88.99/24, 2001::/23,
    /// IPv4-compatible IPv6, and IPv6 outside 2000::/3 (100::/64, 64:ff9b:1::/48, 5f00::/16, …).
    case reserved

    public var isGlobal: Bool { self == .global }

    public init(of address: IPAddress) {
        switch address {
        case let .v4(value): self = Self.scope(v4: value)
        case let .v6(high, low): self = Self.scope(v6: high, low)
        }
    }

    public var description: String {
        switch self {
        case .global: "a public address"
        case .unspecified: "the unspecified address"
        case .thisNetwork: "a \"this network\" address (0.0.0.0/8)"
        case .loopback: "a loopback address"
        case .privateUse: "a private address (RFC 1918)"
        case .sharedAddressSpace: "a carrier-grade NAT address (100.64.0.0/10)"
        case .linkLocal: "a link-local address"
        case .uniqueLocal: "a unique local IPv6 address (fc00::/7)"
        case .siteLocal: "a site-local IPv6 address (fec0::/10)"
        case .multicast: "a multicast address"
        case .broadcast: "the broadcast address"
        case .documentation: "a documentation address"
        case .benchmarking: "a benchmarking address"
        case .reserved: "a reserved or special-purpose address"
        }
    }

    private static func scope(v4 value: UInt32) -> IPAddressScope {
        func within(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ bits: UInt32) -> Bool {
            let base = a << 24 | b << 16 | c << 8 | d
            let mask: UInt32 = bits == 0 ? 0 : ~0 << (32 - bits)
            return value & mask == base
        }
        if value == 0 { return .unspecified }
        if value == 0xFFFF_FFFF { return .broadcast }
        if within(0, 0, 0, 0, 8) { return .thisNetwork }
        if within(127, 0, 0, 0, 8) { return .loopback }
        if within(10, 0, 0, 0, 8) || within(172, 16, 0, 0, 12) || within(192, 168, 0, 0, 16) { return .privateUse }
        if within(100, 64, 0, 0, 10) { return .sharedAddressSpace }
        if within(169, 254, 0, 0, 16) { return .linkLocal }
        if within(192, 0, 2, 0, 24) || within(198, 51, 100, 0, 24) || within(203, 0, 113, 0, 24) { return .documentation }
        if within(198, 18, 0, 0, 15) { return .benchmarking }
        if within(224, 0, 0, 0, 4) { return .multicast }
        if within(240, 0, 0, 0, 4) || within(192, 0, 0, 0, 24) || within(192, 88, 99, 0, 24) { return .reserved }
        return .global
    }

    private static func scope(v6 high: UInt64, _ low: UInt64) -> IPAddressScope {
        /// Whether the address starts with the `bits` leading bits of `prefix` (at most 64: every
        /// prefix tested here ends in the upper half, or is the /96 of an embedded IPv4 address).
        func within(_ prefix: UInt64, _ bits: UInt64) -> Bool {
            let mask: UInt64 = bits == 0 ? 0 : ~0 << (64 - bits)
            return high & mask == prefix
        }
        let embedded = UInt32(truncatingIfNeeded: low)
        if high == 0 {
            if low == 0 { return .unspecified }
            if low == 1 { return .loopback }
            if low >> 32 == 0xFFFF { return scope(v4: embedded) }   // ::ffff:a.b.c.d, mapped
            if low >> 32 == 0 {                                     // ::a.b.c.d, compatible (deprecated)
                let inner = scope(v4: embedded)
                return inner.isGlobal ? .reserved : inner
            }
            return .reserved
        }
        if high == 0x0064_FF9B_0000_0000, low >> 32 == 0 { return scope(v4: embedded) }   // NAT64 64:ff9b::/96
        if within(0xFF00_0000_0000_0000, 8) { return .multicast }
        if within(0xFE80_0000_0000_0000, 10) { return .linkLocal }
        if within(0xFEC0_0000_0000_0000, 10) { return .siteLocal }
        if within(0xFC00_0000_0000_0000, 7) { return .uniqueLocal }
        if within(0x2001_0DB8_0000_0000, 32) || within(0x3FFF_0000_0000_0000, 20) { return .documentation }
        if within(0x2001_0002_0000_0000, 48) { return .benchmarking }
        if within(0x2002_0000_0000_0000, 16) { return scope(v4: UInt32(truncatingIfNeeded: high >> 16)) }   // 6to4
        if within(0x2001_0000_0000_0000, 23) { return .reserved }
        return within(0x2000_0000_0000_0000, 3) ? .global : .reserved
    }
}
