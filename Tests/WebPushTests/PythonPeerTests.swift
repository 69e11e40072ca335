import Foundation
import PushCore
import PythonPeer
import Testing
import WebPush

/// Checks by code that is not ours: Python's http-ece decrypts our bodies as a browser would, and
/// PyJWT verifies our VAPID tokens as a push service would. Versions are pinned by
/// ops/python-peers.sh; a missing venv fails these tests, it never skips them.
@Suite struct PythonPeerTests {
    /// argv: subscription private scalar, auth, body (base64url). Prints the plaintext (base64url),
    /// or REFUSED and exits 3.
    static let httpECEDecrypt = #"""
    import base64, sys
    from importlib.metadata import version
    import http_ece
    from cryptography.hazmat.primitives.asymmetric import ec
    if version("http-ece") != "1.2.1":
        sys.exit("http-ece %s, not the pinned 1.2.1: run ops/python-peers.sh" % version("http-ece"))
    def b64(text): return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    key = ec.derive_private_key(int.from_bytes(b64(sys.argv[1]), "big"), ec.SECP256R1())
    try:
        plaintext = http_ece.decrypt(b64(sys.argv[3]), private_key=key, auth_secret=b64(sys.argv[2]), version="aes128gcm")
    except Exception as error:
        print("REFUSED", type(error).__name__, error)
        sys.exit(3)
    print(base64.urlsafe_b64encode(plaintext).decode().rstrip("="))
    """#

    /// argv: public key (base64url), JWT, expected aud, expected sub. Prints the claims as JSON, or
    /// REFUSED and exits 3.
    static let pyJWTVerify = #"""
    import base64, json, sys
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec
    if jwt.__version__ != "2.15.1":
        sys.exit("PyJWT %s, not the pinned 2.15.1: run ops/python-peers.sh" % jwt.__version__)
    def b64(text): return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    public_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64(sys.argv[1]))
    token = sys.argv[2]
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, public_key, algorithms=["ES256"], audience=sys.argv[3],
                            options={"require": ["aud", "exp", "sub"]})
    except Exception as error:
        print("REFUSED", type(error).__name__, error)
        sys.exit(3)
    if header != {"typ": "JWT", "alg": "ES256"}:
        print("REFUSED header", header)
        sys.exit(3)
    if claims["sub"] != sys.argv[4]:
        print("REFUSED sub", claims["sub"])
        sys.exit(3)
    print(json.dumps(claims))
    """#

    static func decryptWithHTTPECE(_ body: [UInt8], for subscription: TestSubscription) async throws -> PythonPeer.Result {
        try await PythonPeer.run(Self.httpECEDecrypt, [
            subscription.privateKeyBase64URL, subscription.authBase64URL, Base64.encode(body, urlSafe: true, padded: false),
        ])
    }

    @Test(arguments: [0, 1, 41, 500, WebPushRecordFormat.maximumPlaintextLength])
    func httpECEDecryptsOurBody(length: Int) async throws {
        let subscription = try TestSubscription()
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let body = try WebPushMessageEncryptor().encrypt(plaintext, for: subscription.keys)
        let result = try await Self.decryptWithHTTPECE(body, for: subscription)
        #expect(result.status == 0, "http-ece: \(result.stdout)\(result.stderr)")
        #expect(Base64.decode(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == plaintext)
    }

    @Test(arguments: [0, 20, 50, 90, -1])
    func httpECERefusesATamperedBody(offset: Int) async throws {
        let subscription = try TestSubscription()
        var body = try WebPushMessageEncryptor().encrypt(Array("hello from the worker".utf8), for: subscription.keys)
        body[offset >= 0 ? offset : body.count + offset] ^= 0x80
        let result = try await Self.decryptWithHTTPECE(body, for: subscription)
        #expect(result.status == 3, "http-ece accepted a tampered body: \(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("REFUSED"))
    }

    @Test func pyJWTVerifiesOurToken() async throws {
        let key = try VAPIDKey.generate()
        let cache = VAPIDTokenCache(key: key, subject: try VAPIDSubject("mailto:push@example.com"))
        let parsed = try ParsedVAPIDHeader(try cache.authorizationHeader(forEndpoint: "https://fcm.googleapis.com/fcm/send/abc:def"))
        let result = try await PythonPeer.run(Self.pyJWTVerify, [parsed.key, parsed.jwt, "https://fcm.googleapis.com", "mailto:push@example.com"])
        #expect(result.status == 0, "PyJWT: \(result.stdout)\(result.stderr)")
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let expiry = try #require(claims["exp"] as? Int)
        let now = Int(Date().timeIntervalSince1970)
        #expect(expiry > now + 11 * 3600)
        #expect(expiry <= now + 24 * 3600)
    }

    @Test func pyJWTRefusesAnotherKeyAnotherAudienceAndAnAlteredToken() async throws {
        let key = try VAPIDKey.generate()
        let cache = VAPIDTokenCache(key: key, subject: try VAPIDSubject("https://example.com/contact"))
        let parsed = try ParsedVAPIDHeader(try cache.authorizationHeader(forEndpoint: "https://web.push.apple.com/QGuQ"))
        let audience = "https://web.push.apple.com"
        let subject = "https://example.com/contact"
        let otherKey = try VAPIDKey.generate().publicKeyBase64URL
        var altered = Array(parsed.jwt.utf8)
        altered[altered.count - 10] = altered[altered.count - 10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let cases: [(String, [String])] = [
            ("the right key", [parsed.key, parsed.jwt, audience, subject]),
            ("another key", [otherKey, parsed.jwt, audience, subject]),
            ("another audience", [parsed.key, parsed.jwt, "https://fcm.googleapis.com", subject]),
            ("an altered signature", [parsed.key, String(decoding: altered, as: UTF8.self), audience, subject]),
        ]
        for (name, arguments) in cases {
            let result = try await PythonPeer.run(Self.pyJWTVerify, arguments)
            let expected: Int32 = name == "the right key" ? 0 : 3
            #expect(result.status == expected, "\(name): \(result.stdout)\(result.stderr)")
        }
    }
}
