import Crypto
import Foundation
import PushCore
import Synchronization
import Testing
@testable import WebPush

/// A wall clock the test moves by hand.
final class ManualClock: Sendable {
    private let seconds: Atomic<Int>
    init(_ start: Int) { seconds = Atomic(start) }
    var now: Int { seconds.load(ordering: .relaxed) }
    func advance(by delta: Int) { seconds.wrappingAdd(delta, ordering: .relaxed) }
    var vapidClock: VAPIDTokenCache.Clock { VAPIDTokenCache.Clock(unixSeconds: { self.now }) }
}

/// The parts of `vapid t=<jwt>, k=<key>` and of the JWT inside it.
struct ParsedVAPIDHeader {
    let jwt: String
    let key: String
    let header: [String: Any]
    let claims: [String: Any]
    let signingInput: String
    let signature: [UInt8]

    init(_ value: String) throws {
        let fields = try #require(value.hasPrefix("vapid t=") ? value.dropFirst("vapid t=".count).components(separatedBy: ", k=") : nil)
        try #require(fields.count == 2)
        jwt = fields[0]
        key = fields[1]
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        let headerBytes = try #require(Base64.decode(parts[0]))
        let claimsBytes = try #require(Base64.decode(parts[1]))
        header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        claims = try #require(try JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any])
        signingInput = parts[0] + "." + parts[1]
        signature = try #require(Base64.decode(parts[2]))
    }
}

@Suite struct VAPIDTests {
    static let endpoint = "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABexample"
    static let subject = "mailto:push@example.com"

    static func cache(clock: ManualClock, key: VAPIDKey? = nil) throws -> VAPIDTokenCache {
        VAPIDTokenCache(key: try key ?? VAPIDKey.generate(), subject: try VAPIDSubject(subject), clock: clock.vapidClock)
    }

    @Test func tokenHasTheHeaderClaimsAndAValidSignature() throws {
        let clock = ManualClock(1_800_000_000)
        let key = try VAPIDKey.generate()
        let parsed = try ParsedVAPIDHeader(try Self.cache(clock: clock, key: key).authorizationHeader(forEndpoint: Self.endpoint))
        #expect(parsed.header.count == 2)
        #expect(parsed.header["typ"] as? String == "JWT")
        #expect(parsed.header["alg"] as? String == "ES256")
        #expect(parsed.claims.count == 3)
        #expect(parsed.claims["aud"] as? String == "https://updates.push.services.mozilla.com")
        #expect(parsed.claims["sub"] as? String == Self.subject)
        #expect(parsed.claims["exp"] as? Int == clock.now + 12 * 3600)
        #expect(parsed.key == key.publicKeyBase64URL)
        // JWS ES256 is raw r ‖ s; swift-crypto (BoringSSL) checks it.
        #expect(parsed.signature.count == 64)
        let publicKey = try P256.Signing.PublicKey(x963Representation: key.publicKey)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: parsed.signature)
        #expect(publicKey.isValidSignature(signature, for: Data(parsed.signingInput.utf8)))
        #expect(!publicKey.isValidSignature(signature, for: Data((parsed.signingInput + "x").utf8)))
    }

    @Test func expiryIsWithinAppleLimit() throws {
        let clock = ManualClock(1_800_000_000)
        let parsed = try ParsedVAPIDHeader(try Self.cache(clock: clock).authorizationHeader(forEndpoint: "https://web.push.apple.com/QGuQyavXutnMH"))
        let expiry = try #require(parsed.claims["exp"] as? Int)
        #expect(expiry > clock.now)
        #expect(expiry - clock.now <= 24 * 3600)
        #expect(parsed.claims["aud"] as? String == "https://web.push.apple.com")
    }

    @Test func cacheReusesATokenUntilLessThanAnHourIsLeft() throws {
        let clock = ManualClock(1_800_000_000)
        let cache = try Self.cache(clock: clock)
        let first = try cache.authorizationHeader(forEndpoint: Self.endpoint)
        // Another subscription on the same push service: same origin, same token.
        #expect(try cache.authorizationHeader(forEndpoint: "https://updates.push.services.mozilla.com:443/wpush/v2/other") == first)
        clock.advance(by: 11 * 3600)
        #expect(try cache.authorizationHeader(forEndpoint: Self.endpoint) == first)
        clock.advance(by: 1)
        let renewed = try cache.authorizationHeader(forEndpoint: Self.endpoint)
        #expect(renewed != first)
        #expect(try ParsedVAPIDHeader(renewed).claims["exp"] as? Int == clock.now + 12 * 3600)
        #expect(try cache.authorizationHeader(forEndpoint: Self.endpoint) == renewed)
    }

    @Test func eachOriginHasItsOwnToken() throws {
        let clock = ManualClock(1_800_000_000)
        let cache = try Self.cache(clock: clock)
        let mozilla = try ParsedVAPIDHeader(try cache.authorizationHeader(forEndpoint: Self.endpoint))
        let google = try ParsedVAPIDHeader(try cache.authorizationHeader(forEndpoint: "https://fcm.googleapis.com/fcm/send/abc"))
        #expect(mozilla.jwt != google.jwt)
        #expect(google.claims["aud"] as? String == "https://fcm.googleapis.com")
    }

    @Test func cacheKeepsABoundedNumberOfOrigins() throws {
        let clock = ManualClock(1_800_000_000)
        let cache = try Self.cache(clock: clock)
        for index in 0..<(VAPIDTokenCache.maximumOrigins + 10) {
            _ = try cache.authorizationHeader(forEndpoint: "https://push\(index).example/x")
        }
        #expect(cache.cachedOriginCount == VAPIDTokenCache.maximumOrigins)
    }

    @Test func concurrentCallersGetValidTokens() async throws {
        let clock = ManualClock(1_800_000_000)
        let cache = try Self.cache(clock: clock)
        let headers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<32 { group.addTask { try cache.authorizationHeader(forEndpoint: Self.endpoint) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(!headers.isEmpty)
        let cached = try cache.authorizationHeader(forEndpoint: Self.endpoint)
        #expect(headers.contains(cached))
    }

    @Test(arguments: [
        ("https://fcm.googleapis.com/fcm/send/dXkI:APA91b", "https://fcm.googleapis.com"),
        ("HTTPS://Web.Push.Apple.com/QGuQyavXutnMH", "https://web.push.apple.com"),
        ("https://wns2-by3p.notify.windows.com/w/?token=BQYAAAB", "https://wns2-by3p.notify.windows.com"),
        ("https://push.example:8443/p", "https://push.example:8443"),
        ("https://push.example:443", "https://push.example"),
        ("http://127.0.0.1:8080/push/1", "http://127.0.0.1:8080"),
        ("http://127.0.0.1:80/push/1", "http://127.0.0.1"),
        ("https://[::1]:9443/x", "https://[::1]:9443"),
    ])
    func audienceIsTheEndpointsOrigin(endpoint: String, origin: String) throws {
        #expect(try WebPushEndpointOrigin(endpoint: endpoint).value == origin)
    }

    @Test(arguments: ["", "push.example/x", "ftp://push.example/x", "https:///x", "https://user@push.example/x",
                      "https://push.example:0/x", "https://push.example:99999/x", "https://[::1/x"])
    func endpointWithoutAnOriginIsRefused(endpoint: String) {
        let error = #expect(throws: WebPushError.self) { try WebPushEndpointOrigin(endpoint: endpoint) }
        #expect(error?.code == .invalidEndpoint)
        #expect(error?.field == "endpoint")
    }

    @Test(arguments: ["mailto:push@example.com", "mailto:ops+push@sub.example.org", "https://example.com",
                      "https://example.com/contact", "https://push.example:8443/about"])
    func subjectAcceptsMailtoAndHTTPS(text: String) throws {
        #expect(try VAPIDSubject(text).value == text)
    }

    @Test(arguments: [
        ("", "mailto: or https:"),
        ("push@example.com", "mailto: or https:"),
        ("http://example.com", "mailto: or https:"),
        ("mailto: push@example.com", "spaces"),
        ("mailto:<push@example.com>", "angle brackets"),
        ("https://example.com/a b", "spaces"),
        ("mailto:push@localhost", "localhost"),
        ("mailto:push@LOCALHOST.", "localhost"),
        ("https://localhost/contact", "localhost"),
        ("https://localhost:8443", "localhost"),
        ("https://app.localhost", "localhost"),
        ("mailto:", "needs an address"),
        ("mailto:@example.com", "needs an address"),
        ("mailto:push@", "needs an address"),
        ("https://", "needs a host"),
        ("mailto:push\t@example.com", "printable ASCII"),
        ("mailto:püsh@example.com", "printable ASCII"),
    ])
    func subjectThatServicesRefuseIsRefused(text: String, problem: String) {
        let error = #expect(throws: WebPushError.self) { try VAPIDSubject(text) }
        #expect(error?.code == .invalidVAPIDSubject)
        #expect(error?.field == "vapid.subject")
        #expect(error?.message.contains(problem) == true, "\(String(describing: error))")
    }

    @Test func keyFromItsBase64URLScalarHasTheMatchingPublicKey() throws {
        let reference = P256.Signing.PrivateKey()
        let text = Base64.encode(reference.rawRepresentation, urlSafe: true, padded: false)
        #expect(text.count == 43)
        let key = try VAPIDKey(privateKeyBase64URL: text)
        #expect(key.publicKey == Array(reference.publicKey.x963Representation))
        #expect(try key.privateKeyBase64URL() == text)
    }

    @Test func generatedPairLoadsBack() throws {
        let pair = try VAPIDKey.generateBase64URLPair()
        #expect(pair.publicKey.count == 87)
        #expect(pair.privateKey.count == 43)
        #expect(try VAPIDKey(privateKeyBase64URL: pair.privateKey).publicKeyBase64URL == pair.publicKey)
        #expect(try VAPIDKey.generateBase64URLPair().privateKey != pair.privateKey)
    }

    @Test func descriptionShowsOnlyThePublicKey() throws {
        let key = try VAPIDKey.generate()
        #expect(!String(describing: key).contains(try key.privateKeyBase64URL()))
        #expect(String(describing: key).contains(key.publicKeyBase64URL))
    }

    @Test(arguments: [
        "", "not base64!", "AAAA",
        Base64.encode(Array(repeating: 0, count: 32), urlSafe: true, padded: false),
        Base64.encode(Array(repeating: 0xFF, count: 32), urlSafe: true, padded: false),
        Base64.encode(Array(repeating: 1, count: 33), urlSafe: true, padded: false),
    ])
    func invalidPrivateKeyIsRefused(text: String) {
        let error = #expect(throws: WebPushError.self) { try VAPIDKey(privateKeyBase64URL: text) }
        #expect(error?.code == .invalidVAPIDKey)
        #expect(error?.field == "vapid.privateKey")
    }
}
