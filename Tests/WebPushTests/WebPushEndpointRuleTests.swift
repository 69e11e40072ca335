import Testing
import WebPush

/// What an app refuses to send to before any connection: ports, and hosts written as addresses
/// that are not public (a name is checked by the HTTP/2 pool where it is resolved).
@Suite struct WebPushEndpointRuleTests {
    static func origin(_ endpoint: String) -> WebPushEndpointOrigin { try! WebPushEndpointOrigin(endpoint: endpoint) }

    @Test(arguments: [
        ("https://127.0.0.1:6379/x", "127.0.0.1 is a loopback address"),
        ("https://[::1]/x", "::1 is a loopback address"),
        ("https://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"),
        ("https://10.1.2.3/x", "10.1.2.3 is a private address (RFC 1918)"),
        ("https://[::ffff:192.168.0.1]/x", "::ffff:192.168.0.1 is a private address (RFC 1918)"),
        ("https://100.64.0.1/x", "100.64.0.1 is a carrier-grade NAT address"),
        ("https://0.0.0.0/x", "0.0.0.0 is the unspecified address"),
        ("https://[fd00::1]/x", "fd00::1 is a unique local IPv6 address"),
    ])
    func aPrivateAddressIsRefusedNamingItsClass(_ endpoint: String, _ words: String) throws {
        let refusal = try #require(WebPushEndpointRule().refusal(of: Self.origin(endpoint)))
        #expect(refusal.contains(words), "\(refusal)")
        #expect(refusal.contains("allow_private_endpoints"))
        #expect(WebPushEndpointRule(allowPrivateAddresses: true, allowedPorts: nil).refusal(of: Self.origin(endpoint)) == nil)
    }

    @Test func onlyPort443ByDefault() throws {
        #expect(WebPushEndpointRule().refusal(of: Self.origin("https://fcm.googleapis.com/fcm/send/x")) == nil)
        #expect(WebPushEndpointRule().refusal(of: Self.origin("https://8.8.8.8/x")) == nil)
        let refusal = try #require(WebPushEndpointRule().refusal(of: Self.origin("https://push.example:8443/x")))
        #expect(refusal == "the endpoint's port 8443 on push.example is not allowed (allowed_endpoint_ports: 443)")
        #expect(WebPushEndpointRule(allowedPorts: [443, 8443]).refusal(of: Self.origin("https://push.example:8443/x")) == nil)
        #expect(WebPushEndpointRule(allowedPorts: nil).refusal(of: Self.origin("https://push.example:25/x")) == nil)
        // Private addresses allowed leaves the ports as they are.
        #expect(WebPushEndpointRule(allowPrivateAddresses: true).refusal(of: Self.origin("https://10.0.0.5:6379/x")) != nil)
    }

    /// Without a proxy a name is left to the pool, which checks what it resolves to; through a
    /// proxy, which resolves it itself, `localhost` is refused by its name.
    @Test func localhostByNameOnlyThroughAProxy() throws {
        let local = Self.origin("https://localhost/x")
        #expect(WebPushEndpointRule().refusal(of: local) == nil)
        #expect(WebPushEndpointRule(proxied: true).refusal(of: local)?.contains("names this machine") == true)
        #expect(WebPushEndpointRule(proxied: true).refusal(of: Self.origin("https://api.localhost./x")) != nil)
        #expect(WebPushEndpointRule(proxied: true).refusal(of: Self.origin("https://push.example/x")) == nil)
        #expect(WebPushEndpointRule(allowPrivateAddresses: true, proxied: true).refusal(of: local) == nil)
    }
}
