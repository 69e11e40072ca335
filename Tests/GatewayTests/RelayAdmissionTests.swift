import Gateway
import HTTP2
import Testing

/// The relay's decisions, driven by the time given: no clock, no network.
@Suite struct RelayAdmissionTests {
    static let a = RelayClient.ipv4(0xCB00_7101)   // 203.0.113.1
    static let b = RelayClient.ipv4(0xCB00_7102)

    static func limits(address: (Int, Int) = (1, 3), app: (Int, Int) = (100, 1000), maxAddresses: Int = 100) -> RelayLimits {
        var limits = RelayLimits()
        limits.perAddress = .init(requestsPerSecond: address.0, burst: address.1)
        limits.perApp = .init(requestsPerSecond: app.0, burst: app.1)
        limits.maxAddresses = maxAddresses
        return limits
    }

    @Test func anAddressGetsItsBurstThenWaitsForItsRate() {
        var admission = RelayAdmission(limits: Self.limits(address: (2, 3)))
        let first = (0..<5).map { _ in admission.admit(client: Self.a, app: "toot", now: .zero) }
        #expect(first == [.allowed, .allowed, .allowed, .refused(.address, retryAfterSeconds: 1), .refused(.address, retryAfterSeconds: 1)])
        // Another address is not held back by it.
        #expect(admission.admit(client: Self.b, app: "toot", now: .zero) == .allowed)
        // Half a second at 2 a second: one more.
        #expect(admission.admit(client: Self.a, app: "toot", now: .milliseconds(500)) == .allowed)
        #expect(admission.admit(client: Self.a, app: "toot", now: .milliseconds(500)) == .refused(.address, retryAfterSeconds: 1))
    }

    @Test func theAppsCapHoldsAcrossAddressesAndChargesNoAddress() {
        var admission = RelayAdmission(limits: Self.limits(address: (1, 3), app: (1, 4)))
        let fromA = (0..<3).map { _ in admission.admit(client: Self.a, app: "toot", now: .zero) }
        let fromB = (0..<3).map { _ in admission.admit(client: Self.b, app: "toot", now: .zero) }
        #expect(fromA == [.allowed, .allowed, .allowed])
        #expect(fromB == [.allowed, .refused(.app, retryAfterSeconds: 1), .refused(.app, retryAfterSeconds: 1)])
        // Another app has a bucket of its own.
        #expect(admission.admit(client: Self.b, app: "toot-dev", now: .zero) == .allowed)
        // B was charged for one post only: one second later the app has a token and B two.
        #expect(admission.admit(client: Self.b, app: "toot", now: .seconds(1)) == .allowed)
        #expect(admission.admit(client: Self.b, app: "toot-dev", now: .seconds(1)) == .allowed)
        #expect(admission.admit(client: Self.b, app: "toot-dev", now: .seconds(1)) == .refused(.address, retryAfterSeconds: 1))
    }

    /// An address over its limit takes nothing from the app: one flooding client cannot use up
    /// everyone's share.
    @Test func aRefusedAddressLeavesTheAppsTokens() {
        var admission = RelayAdmission(limits: Self.limits(address: (1, 1), app: (1, 2)))
        for _ in 0..<100 { _ = admission.admit(client: Self.a, app: "toot", now: .zero) }
        #expect(admission.admit(client: Self.b, app: "toot", now: .zero) == .allowed)
    }

    @Test func aFloodOfNewAddressesKeepsTheTableBounded() {
        var admission = RelayAdmission(limits: Self.limits(app: (1_000_000, 1_000_000), maxAddresses: 100))
        for index in 0..<10_000 {
            #expect(admission.admit(client: .ipv4(UInt32(index)), app: "toot", now: .zero) == .allowed)
            #expect(admission.trackedAddresses <= 100)
        }
    }

    /// At the bound, buckets that have refilled go first: they decide as a new one would.
    @Test func fullBucketsAreDroppedFirst() {
        var admission = RelayAdmission(limits: Self.limits(address: (1, 3), maxAddresses: 100))
        for index in 0..<100 { _ = admission.admit(client: .ipv4(UInt32(index)), app: "toot", now: .zero) }
        #expect(admission.trackedAddresses == 100)
        // One second later all of them are full again (1 a second, one taken each).
        #expect(admission.admit(client: .ipv4(1000), app: "toot", now: .seconds(1)) == .allowed)
        #expect(admission.trackedAddresses == 1)
    }

    /// A client refused again and again stays in the table while new addresses push others out:
    /// were it evicted, it would come back with a full burst.
    @Test func aRefusedClientIsNotTheOneEvicted() {
        var admission = RelayAdmission(limits: Self.limits(address: (1, 2), app: (1_000_000, 1_000_000), maxAddresses: 100))
        var now = Duration.zero
        #expect(admission.admit(client: Self.a, app: "toot", now: now) == .allowed)
        #expect(admission.admit(client: Self.a, app: "toot", now: now) == .allowed)
        for index in 0..<1000 {
            now += .microseconds(10)        // 10 ms in all: a hundredth of a token for A
            #expect(admission.admit(client: Self.a, app: "toot", now: now) == .refused(.address, retryAfterSeconds: 1))
            _ = admission.admit(client: .ipv4(UInt32(index)), app: "toot", now: now)
        }
        #expect(admission.admit(client: Self.a, app: "toot", now: now) == .refused(.address, retryAfterSeconds: 1))
    }
}

@Suite struct RelayClientTests {
    static let loopback = ["127.0.0.0/8", "::1"].compactMap(IPNetwork.init)

    static func client(peer: String, forwardedFor: [String] = [], trusted: [String]? = nil) -> RelayClient {
        RelayClient(peer: IPAddress(peer), forwardedFor: forwardedFor, trustedProxies: trusted.map { $0.compactMap(IPNetwork.init) } ?? loopback)
    }

    @Test func anIPv6ClientIsItsSlash64AndAMappedIPv4ClientItsIPv4Address() {
        #expect(Self.client(peer: "2001:db8:1:2::1") == Self.client(peer: "2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(Self.client(peer: "2001:db8:1:2::1") != Self.client(peer: "2001:db8:1:3::1"))
        #expect(Self.client(peer: "::ffff:192.0.2.1") == .ipv4(0xC000_0201))
        #expect(Self.client(peer: "2001:db8:1:2::1").description == "2001:db8:1:2::/64")
        #expect(RelayClient(nil) == .unknown)
    }

    @Test func forwardedForCountsOnlyFromATrustedProxy() {
        // A local proxy (trusted by default) names the client.
        #expect(Self.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.7"]) == Self.client(peer: "203.0.113.7"))
        // Anyone else's header is its own word: the peer counts.
        #expect(Self.client(peer: "198.51.100.1", forwardedFor: ["203.0.113.7"]) == Self.client(peer: "198.51.100.1"))
        // What the client wrote before the proxy appended its address is not believed.
        #expect(Self.client(peer: "127.0.0.1", forwardedFor: ["6.6.6.6, 203.0.113.7"]) == Self.client(peer: "203.0.113.7"))
        // Through two trusted proxies, and over two header lines.
        #expect(Self.client(peer: "10.0.0.1", forwardedFor: ["203.0.113.7, 10.0.0.2", "10.0.0.3"], trusted: ["10.0.0.0/8"])
                == Self.client(peer: "203.0.113.7"))
        #expect(Self.client(peer: "127.0.0.1", forwardedFor: [" [2001:db8::1] "]) == Self.client(peer: "2001:db8::1"))
        // A hop that is no address: no address to go by.
        #expect(Self.client(peer: "127.0.0.1", forwardedFor: ["unknown"]) == .unknown)
        #expect(Self.client(peer: "127.0.0.1") == Self.client(peer: "127.0.0.1"))
    }
}
