import Gateway
import Testing

struct GatewaySettingsTests {
    @Test func pushdEndpointsTakeHostAndBothPorts() throws {
        let endpoints = try PushdEndpoints(parsing: "127.0.0.1:7734,7874")
        #expect(endpoints == PushdEndpoints(host: "127.0.0.1", registrationPort: 7734, notificationPort: 7874))
        #expect(try PushdEndpoints(parsing: "localhost") == PushdEndpoints(host: "localhost", registrationPort: 7734, notificationPort: 7874))
    }

    @Test func badPushdEndpointsAreNamed() {
        for text in ["127.0.0.1:7734", "127.0.0.1:7734,x", "127.0.0.1:7734,70000", "127.0.0.1:1,2,3"] {
            #expect(throws: GatewaySettingError.self) { try PushdEndpoints(parsing: text) }
        }
        do {
            _ = try PushdEndpoints(parsing: "h:1")
        } catch {
            #expect(error.message.hasPrefix("pushd_udp: expected HOST:REGISTRATION_PORT,NOTIFICATION_PORT"))
        }
    }

    @Test func listenTakesHostAndPort() throws {
        let address = try ListenAddress(parsing: "0.0.0.0:8080")
        #expect(address.host == "0.0.0.0" && address.port == 8080)
        #expect(try ListenAddress(parsing: ":0").host == "127.0.0.1")
        #expect(throws: GatewaySettingError.self) { try ListenAddress(parsing: "8080") }
        #expect(throws: GatewaySettingError.self) { try ListenAddress(parsing: "host:99999") }
    }
}

/// pushd's UDP protocol has no authentication: only loopback is taken without --pushd-udp-public.
@Suite struct PushdLoopbackTests {
    @Test func onlyLoopbackAddressesCountAsLoopback() throws {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1"] {
            #expect(PushdEndpoints(host: host, registrationPort: 1, notificationPort: 2).isLoopback, "\(host)")
        }
        for host in ["0.0.0.0", "10.0.0.5", "192.168.1.2", "example.com", "::"] {
            #expect(!PushdEndpoints(host: host, registrationPort: 1, notificationPort: 2).isLoopback, "\(host)")
        }
    }
}
