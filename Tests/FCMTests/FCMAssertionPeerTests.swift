import Foundation
import PythonPeer
import Testing
@testable import FCM

/// PyJWT (pinned by ops/python-peers.sh) verifies our OAuth assertion with the key's public half, as
/// Google's token endpoint would. A missing venv fails the test, it never skips it.
@Suite struct FCMAssertionPeerTests {
    /// argv: private key PEM file, JWT, expected aud, iss, kid. Prints the claims as JSON, or
    /// REFUSED and exits 3.
    static let pyJWTVerify = #"""
    import json, sys
    import jwt
    from cryptography.hazmat.primitives import serialization
    if jwt.__version__ != "2.15.1":
        sys.exit("PyJWT %s, not the pinned 2.15.1: run ops/python-peers.sh" % jwt.__version__)
    with open(sys.argv[1], "rb") as handle:
        public_key = serialization.load_pem_private_key(handle.read(), password=None).public_key()
    token = sys.argv[2]
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, public_key, algorithms=["RS256"], audience=sys.argv[3], issuer=sys.argv[4],
                            options={"require": ["aud", "exp", "iat", "iss"]})
    except Exception as error:
        print("REFUSED", type(error).__name__, error)
        sys.exit(3)
    if header != {"alg": "RS256", "typ": "JWT", "kid": sys.argv[5]}:
        print("REFUSED header", header)
        sys.exit(3)
    print(json.dumps(claims, sort_keys=True))
    """#

    private static func withKeyFile<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-key-\(UUID().uuidString).pem").path
        try Data(TestServiceAccount.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    @Test("PyJWT verifies the RS256 assertion: header, issuer, audience, scope, an hour's lifetime")
    func verified() async throws {
        let account = try FCMServiceAccount(json: TestServiceAccount.json(TestServiceAccount.members()))
        let issuedAt = Int(Date().timeIntervalSince1970)
        let assertion = try FCMAssertion.make(for: account, issuedAt: issuedAt)
        let result = try await Self.withKeyFile { path in
            try await PythonPeer.run(Self.pyJWTVerify, [path, assertion, account.tokenURI, account.clientEmail, account.privateKeyID])
        }
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let claims = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(claims?["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims?["iat"] as? Int == issuedAt)
        #expect(claims?["exp"] as? Int == issuedAt + 3600)
        #expect(claims?["aud"] as? String == "https://oauth2.googleapis.com/token")
    }

    @Test("PyJWT refuses the assertion once a byte of its signature changes")
    func tampered() async throws {
        let account = try FCMServiceAccount(json: TestServiceAccount.json(TestServiceAccount.members()))
        var assertion = try FCMAssertion.make(for: account, issuedAt: Int(Date().timeIntervalSince1970))
        let last = assertion.removeLast()
        assertion.append(last == "A" ? "B" : "A")
        let result = try await Self.withKeyFile { path in
            try await PythonPeer.run(Self.pyJWTVerify, [path, assertion, account.tokenURI, account.clientEmail, account.privateKeyID])
        }
        #expect(result.status == 3, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.hasPrefix("REFUSED"))
    }

    @Test("the token request's form body")
    func formBody() {
        #expect(String(decoding: FCMAssertion.formBody(assertion: "a.b.c"), as: UTF8.self)
            == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b.c")
    }
}
