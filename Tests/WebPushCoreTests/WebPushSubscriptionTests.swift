import PushCore
import Testing
import WebPushCore

/// A subscription as browsers give it, and its compact form; every refusal names the member.
@Suite struct WebPushSubscriptionTests {
    // The RFC 8291 Appendix A subscription's keys (ua_public, auth_secret).
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let endpoint = "https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV"
    static let json = #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#

    @Test func theBrowsersJSONAndTheCompactFormAreOneSubscription() throws {
        let fromJSON = try WebPushSubscription(text: Self.json)
        #expect(fromJSON.endpoint == Self.endpoint)
        #expect(fromJSON.p256dh.count == 65 && fromJSON.p256dh.first == 0x04 && fromJSON.auth.count == 16)
        #expect(fromJSON.compact == "\(Self.endpoint)#p256dh=\(Self.p256dh)&auth=\(Self.auth)")
        let fromCompact = try WebPushSubscription(text: fromJSON.compact)
        #expect(fromCompact == fromJSON)
        let parsed = try JSONParser.parse(Array(Self.json.utf8))
        #expect(try WebPushSubscription(json: parsed) == fromJSON)
        // The parameters in either order; padding accepted.
        #expect(try WebPushSubscription(text: "\(Self.endpoint)#auth=\(Self.auth)==&p256dh=\(Self.p256dh)") == fromJSON)
    }

    @Test func aPlainHTTPEndpointIsRefusedEvenOnLoopback() throws {
        for endpoint in ["http://127.0.0.1:8443/wp/1", "http://localhost/wp/1", "http://[::1]:80/x", "ftp://push.example.net/x"] {
            let problem = try #require(throws: SubscriptionProblem.self) {
                try WebPushSubscription(text: "\(endpoint)#p256dh=\(Self.p256dh)&auth=\(Self.auth)")
            }
            #expect(problem.field == "endpoint")
            #expect(problem.problem.contains("https"))
        }
    }

    @Test(arguments: [
        ("https://push.example.net/x#p256dh=\(p256dh)", "keys.auth", "is missing"),
        ("https://push.example.net/x#p256dh=\(p256dh)&auth=AAAA", "keys.auth", "16-byte"),
        ("https://push.example.net/x#p256dh=AAAA&auth=\(auth)", "keys.p256dh", "65 bytes"),
        ("https://push.example.net/x#p256dh=%%%&auth=\(auth)", "keys.p256dh", "not base64url"),
        ("ftp://push.example.net/x#p256dh=\(p256dh)&auth=\(auth)", "endpoint", "https URL"),
        ("https://push.example.net/a b#p256dh=\(p256dh)&auth=\(auth)", "endpoint", "without spaces"),
        (#"{"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#, "endpoint", "is missing"),
        (#"{"endpoint":"https://push.example.net/x"}"#, "keys", "is missing"),
        (#"{"endpoint":"https://push.example.net/x","keys":{"p256dh":7,"auth":"\#(auth)"}}"#, "keys.p256dh", "base64url string"),
    ])
    func refusalsNameTheMember(text: String, field: String, problem: String) {
        do {
            _ = try WebPushSubscription(text: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.field == field, "\(error)")
            #expect(error.problem.contains(problem), "\(error)")
        }
    }

    @Test func neitherJSONNorCompactIsRefusedSayingWhatIsExpected() {
        #expect { try WebPushSubscription(text: "abcdef") } throws: { error in
            "\(error)".contains("<endpoint>#p256dh=<base64url>&auth=<base64url>")
        }
        #expect { try WebPushSubscription(text: "{\"endpoint\":") } throws: { error in
            "\(error)".contains("not valid JSON")
        }
    }
}
