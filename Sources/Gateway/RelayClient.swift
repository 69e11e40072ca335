import HTTP2

/// Whom the relay's per-client limit counts as one client: an IPv4 address, or an IPv6 /64 (the
/// smallest network a site is given, so one host cannot walk its 2^64 addresses to get a fresh
/// burst each time).
public enum RelayClient: Sendable, Hashable, CustomStringConvertible {
    case ipv4(UInt32)
    /// The top 64 bits of the address.
    case ipv6Network(UInt64)
    /// No IP address to go by (a Unix socket, or a proxy's header naming none): one shared bucket.
    case unknown

    public init(_ address: IPAddress?) {
        switch address?.unmapped {
        case let .v4(value): self = .ipv4(value)
        case let .v6(high, _): self = .ipv6Network(high)
        case nil: self = .unknown
        }
    }

    /// The client a request comes from. Behind trusted proxies, that is the last address of
    /// `X-Forwarded-For` that is not one of them (each proxy appends the address it was reached
    /// from, so entries to the left of it are the client's own word and not believed).
    ///
    /// - Parameters:
    ///   - peer: the address the TCP connection comes from.
    ///   - forwardedFor: the `X-Forwarded-For` header's values, in order.
    ///   - trustedProxies: the addresses whose `X-Forwarded-For` is believed.
    public init(peer: IPAddress?, forwardedFor: [String], trustedProxies: [IPNetwork]) {
        var client = peer?.unmapped
        func isTrusted(_ address: IPAddress) -> Bool { trustedProxies.contains { $0.contains(address) } }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.reversed()
        for hop in hops {
            guard let current = client, isTrusted(current) else { break }
            client = Self.address(String(hop))
            guard client != nil else { break }
        }
        self.init(client)
    }

    public var description: String {
        switch self {
        case let .ipv4(value): "\(IPAddress.v4(value))"
        case let .ipv6Network(high): "\(IPAddress.v6(high: high, low: 0))/64"
        case .unknown: "an unknown address"
        }
    }

    /// An entry as proxies write them: an address, with spaces around it, an IPv6 one maybe in brackets.
    private static func address(_ text: String) -> IPAddress? {
        var entry = Substring(text)
        while entry.first == " " || entry.first == "\t" { entry.removeFirst() }
        while entry.last == " " || entry.last == "\t" { entry.removeLast() }
        if entry.first == "[", entry.last == "]" { entry = entry.dropFirst().dropLast() }
        return IPAddress(String(entry))?.unmapped
    }
}
