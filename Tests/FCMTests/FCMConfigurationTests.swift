import FCM
import Logging
import Testing

@Suite("FCMConfiguration: checked before anything connects")
struct FCMConfigurationTests {
    private func account() throws -> FCMServiceAccount {
        try FCMServiceAccount(json: TestServiceAccount.json(TestServiceAccount.members()))
    }

    private func problem(_ change: (inout FCMConfiguration) -> Void) throws -> String? {
        var configuration = FCMConfiguration(serviceAccount: try account())
        change(&configuration)
        do {
            let client = try FCMClient(configuration: configuration, logger: Logger(label: "fcm-test"))
            _ = client.configuration
            return nil
        } catch {
            return error.description
        }
    }

    @Test("a request timeout under 15 s is refused, saying why")
    func shortTimeout() throws {
        #expect(try problem { $0.requestTimeout = .seconds(10) }
            == "request-timeout: must be at least 15 s for FCM (shorter timeouts retry messages FCM accepted, and devices get duplicates), got 10s")
        #expect(try problem { $0.requestTimeout = .seconds(15) } == nil)
    }

    @Test("the defaults: FCM's host, 100 streams per connection, 30 s")
    func defaults() throws {
        let configuration = FCMConfiguration(serviceAccount: try account())
        #expect(try configuration.endpoint() == ("fcm.googleapis.com", 443))
        #expect(configuration.maxStreamsPerConnection == 100)
        #expect(configuration.requestTimeout == .seconds(30))
    }

    @Test("the URL override: an https origin", arguments: [
        ("https://127.0.0.1:2198", nil),
        ("http://127.0.0.1:2198", "fcm-url: the scheme must be https://"),
        ("https://127.0.0.1:2198/v1", "fcm-url: give the origin only, without a path"),
        ("https://", "fcm-url: no host"),
    ] as [(String, String?)])
    func url(_ url: String, _ expected: String?) throws {
        #expect(try problem { $0.url = url } == expected)
    }

    @Test("connection limits below one are refused")
    func limits() throws {
        #expect(try problem { $0.maxConnections = 0 } == "max-connections: must be at least 1, got 0")
        #expect(try problem { $0.maxStreamsPerConnection = 0 } == "max-streams-per-connection: must be at least 1, got 0")
    }
}
