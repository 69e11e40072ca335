import PushCore
import Testing

/// The one URL parser behind --amqp-url, --redis-url, --apns-url and --apns-proxy.
@Suite struct ServiceURLTests {
    @Test func everyPartIsRead() throws {
        let url = try ServiceURL(parsing: "amqps://app%40x:p%3Ass@broker.example:5671/%2Fjobs", schemes: ["amqp", "amqps"])
        #expect(url.scheme == "amqps")
        #expect(url.user == "app@x")
        #expect(url.password == "p:ss")
        #expect(url.host == "broker.example")
        #expect(url.port == 5671)
        #expect(url.rawPath == "%2Fjobs")
        #expect(try ServiceURL.percentDecoded(url.rawPath, part: "vhost") == "/jobs")
    }

    @Test func ipv6HostsAreWrittenInBrackets() throws {
        let url = try ServiceURL(parsing: "https://[::1]:2197/", schemes: ["https"])
        #expect(url.host == "::1")
        #expect(url.port == 2197)
        #expect(url.rawPath == "")
    }

    @Test func absentPartsAreNil() throws {
        let url = try ServiceURL(parsing: "redis://", schemes: ["redis"])
        #expect(url.user == nil && url.password == nil && url.port == nil)
        #expect(url.host == "")
        let userOnly = try ServiceURL(parsing: "http://proxyuser@proxy:3128", schemes: ["http"])
        #expect(userOnly.user == "proxyuser")
        #expect(userOnly.password == nil)
    }

    /// Bad input names the problem and never repeats the URL (it may hold a password).
    @Test(arguments: [
        ("ftp://u:hunter2secret@h", "the scheme must be redis://"),
        ("redis://u:hunter2secret@h:99999", "port must be a number from 1 to 65535"),
        ("redis://u:hunter2secret@h:port", "port must be a number from 1 to 65535"),
        ("redis://u:hunter2secret%zz@h", "bad percent-encoding in the password"),
        ("redis://u:hunter2secret%ff@h", "the password is not UTF-8"),
        ("redis://u:hunter2secret@[::1", "unterminated IPv6 address"),
        ("redis://u:hunter2secret@h/0?db=1", "query parameters"),
    ])
    func badURLsAreRefusedWithoutBeingEchoed(url: String, problem: String) {
        #expect {
            try ServiceURL(parsing: url, schemes: ["redis"])
        } throws: { error in
            let text = String(describing: error)
            return text.contains(problem) && !text.contains("hunter2secret")
        }
    }
}
