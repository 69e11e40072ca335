import HTTP2
import Testing

@Suite struct IPNetworkTests {
    /// Whether the block written `network` holds the address written `address` (nil: either is not one).
    static func contains(_ network: String, _ address: String) -> Bool? {
        guard let network = IPNetwork(network), let address = IPAddress(address) else { return nil }
        return network.contains(address)
    }

    @Test func aBlockHoldsTheAddressesUnderItsPrefix() {
        #expect(Self.contains("10.0.0.0/8", "10.255.1.2") == true)
        #expect(Self.contains("10.0.0.0/8", "11.0.0.1") == false)
        #expect(Self.contains("2001:db8::/32", "2001:db8:ffff::1") == true)
        #expect(Self.contains("2001:db8::/32", "2001:db9::1") == false)
        // Prefixes that cut inside the low half of an IPv6 address.
        #expect(Self.contains("2001:db8::1:0:0/96", "2001:db8::1:ffff:ffff") == true)
        #expect(Self.contains("2001:db8::1:0:0/96", "2001:db8::2:0:0") == false)
    }

    @Test func aBareAddressIsABlockOfOneAndHostBitsAreCleared() {
        #expect(IPNetwork("::1")?.prefixLength == 128)
        #expect(Self.contains("::1", "::1") == true)
        #expect(Self.contains("::1", "::2") == false)
        #expect(IPNetwork("10.1.2.3/8")?.description == "10.0.0.0/8")
        #expect(Self.contains("0.0.0.0/0", "192.0.2.1") == true)
    }

    @Test func familiesDoNotMix() {
        #expect(Self.contains("0.0.0.0/0", "::1") == false)
        #expect(Self.contains("::/0", "127.0.0.1") == false)
    }

    @Test func anythingElseIsRefused() {
        for text in ["", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/+8", "example.com", "10.0.0.0/8/8", "10.0.0/8"] {
            #expect(IPNetwork(text) == nil, "\(text)")
        }
    }

    @Test func aMappedAddressUnmapsToItsIPv4Address() {
        #expect(IPAddress("::ffff:192.0.2.1")?.unmapped == IPAddress("192.0.2.1"))
        #expect(IPAddress("2001:db8::1")?.unmapped == IPAddress("2001:db8::1"))
    }
}
