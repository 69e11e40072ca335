import HTTP2
import Testing

/// The classifier a client that must stay on the public internet connects by: every IANA
/// special-purpose block it refuses, in both families and in IPv6's forms that carry an IPv4
/// address, and the public addresses next to them that it must not refuse.
@Suite struct IPAddressScopeTests {
    static func scope(_ text: String) -> IPAddressScope? { IPAddress(text).map { IPAddressScope(of: $0) } }

    @Test(arguments: [
        ("0.0.0.0", IPAddressScope.unspecified), ("0.1.2.3", .thisNetwork),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("10.0.0.1", .privateUse), ("10.255.255.255", .privateUse), ("172.16.0.1", .privateUse), ("172.31.255.255", .privateUse),
        ("192.168.1.1", .privateUse),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("169.254.169.254", .linkLocal), ("169.254.0.1", .linkLocal),
        ("192.0.2.10", .documentation), ("198.51.100.7", .documentation), ("203.0.113.200", .documentation),
        ("198.18.0.1", .benchmarking), ("198.19.255.255", .benchmarking),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.254", .reserved), ("255.255.255.255", .broadcast),
        ("192.0.0.8", .reserved), ("192.88.99.1", .reserved),
    ])
    func specialIPv4(_ text: String, _ expected: IPAddressScope) {
        #expect(Self.scope(text) == expected, "\(text)")
        #expect(Self.scope(text)?.isGlobal == false)
    }

    /// Next to each refused block: the public neighbours stay public.
    @Test(arguments: ["1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
                      "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.255", "192.0.3.0",
                      "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255", "142.250.74.110"])
    func publicIPv4(_ text: String) {
        #expect(Self.scope(text) == .global, "\(text)")
    }

    @Test(arguments: [
        ("::", IPAddressScope.unspecified), ("::1", .loopback),
        ("fe80::1", .linkLocal), ("febf:ffff::1", .linkLocal), ("fec0::1", .siteLocal),
        ("fc00::1", .uniqueLocal), ("fd12:3456:789a::1", .uniqueLocal),
        ("ff02::1", .multicast), ("ff0e::101", .multicast),
        ("2001:db8::1", .documentation), ("3fff::1", .documentation),
        ("2001:2::1", .benchmarking), ("2001::1", .reserved), ("2001:10::1", .reserved),
        ("100::1", .reserved), ("64:ff9b:1::1", .reserved), ("5f00::1", .reserved), ("4000::1", .reserved), ("1::1", .reserved),
        // IPv4 inside IPv6: what the IPv4 address is.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.1.2.3", .privateUse), ("::ffff:169.254.169.254", .linkLocal),
        ("::ffff:0.0.0.0", .unspecified), ("::ffff:100.64.0.1", .sharedAddressSpace),
        ("::127.0.0.1", .loopback), ("::10.0.0.1", .privateUse), ("::8.8.8.8", .reserved),
        ("64:ff9b::127.0.0.1", .loopback), ("64:ff9b::192.168.0.1", .privateUse),
        ("2002:7f00:1::", .loopback), ("2002:c0a8:101::1", .privateUse), ("2002:a9fe:a9fe::", .linkLocal),
    ])
    func specialIPv6(_ text: String, _ expected: IPAddressScope) {
        #expect(Self.scope(text) == expected, "\(text)")
    }

    @Test(arguments: ["2a00:1450:4001:82b::200a", "2606:4700:4700::1111", "2001:4860:4860::8888", "2400:cb00::1",
                      "3ffe::1", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1"])
    func publicIPv6(_ text: String) {
        #expect(Self.scope(text) == .global, "\(text)")
    }

    @Test func textForms() {
        #expect(IPAddress("127.0.0.1") == .v4(0x7F00_0001))
        #expect(IPAddress("::1") == .v6(high: 0, low: 1))
        #expect(IPAddress("::ffff:10.0.0.1") == .v6(high: 0, low: 0xFFFF_0A00_0001))
        #expect(IPAddress("2001:DB8::1")?.description == "2001:db8::1")
        #expect(IPAddress("10.0.0.1")?.description == "10.0.0.1")
        #expect(IPAddress("::ffff:10.0.0.1")?.description == "::ffff:10.0.0.1")
        for text in ["localhost", "example.com", "[::1]", "127.1", "0x7f.0.0.1", "1.2.3.4.5", "fe80::1%eth0", ""] {
            #expect(IPAddress(text) == nil, "\(text) is no address")
        }
        #expect(IPAddressScope.linkLocal.description.contains("link-local"))
    }
}
