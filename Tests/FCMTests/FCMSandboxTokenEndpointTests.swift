import _CryptoExtras
import Crypto
import FCM
import Foundation
import HTTP2
import PushCore
import Testing

/// The sandbox's token endpoint checks an assertion as Google documents it: the signature of the
/// account's key, issuer, audience, scope and an hour's validity at most. Assertions made here
/// with swift-crypto, apart from the client's OpenSSL signer.
@Suite struct FCMSandboxTokenEndpointTests {
    struct Claims {
        var iss: String
        var aud: String
        var scope = "https://www.googleapis.com/auth/firebase.messaging"
        var iat = Int(Date().timeIntervalSince1970)
        var lifetime = 3600
    }

    static func assertion(_ claims: Claims, key: _RSA.Signing.PrivateKey, alg: String = "RS256") throws -> String {
        func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let header = #"{"alg":"\#(alg)","typ":"JWT"}"#
        let body = #"{"iss":"\#(claims.iss)","aud":"\#(claims.aud)","scope":"\#(claims.scope)","iat":\#(claims.iat),"exp":\#(claims.iat + claims.lifetime)}"#
        let input = base64URL(Data(header.utf8)) + "." + base64URL(Data(body.utf8))
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// The service account the sandbox wrote: its key, e-mail and token URI.
    static func account(_ harness: FCMSandboxHarness) throws -> (key: _RSA.Signing.PrivateKey, email: String, tokenURI: String) {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: harness.serviceAccountFile))) as? [String: String] ?? [:]
        return (try _RSA.Signing.PrivateKey(pemRepresentation: json["private_key"] ?? ""), json["client_email"] ?? "", json["token_uri"] ?? "")
    }

    static func post(_ form: String, to harness: FCMSandboxHarness) async throws -> (status: Int, body: String, date: String?) {
        let raw = harness.makeRawClient()
        let response: Result<HTTP2Response, HTTP2Error>
        do {
            response = .success(try await raw.send(HTTP2Request(method: "POST", path: "/token", headers: [
                HTTP2Header(name: "content-type", value: "application/x-www-form-urlencoded"),
            ], body: Array(form.utf8))))
        } catch {
            response = .failure(error)
        }
        await raw.shutdown()
        let answer = try response.get()
        return (answer.status, String(decoding: answer.body, as: UTF8.self), answer.header("date"))
    }

    static func grant(_ assertion: String) -> String {
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
    }

    @Test("a well-made assertion gets a bearer token with its lifetime")
    func accepted() async throws {
        try await withFCMSandbox({ $0.tokenLifetime = .seconds(1800) }) { harness in
            let account = try Self.account(harness)
            let answer = try await Self.post(Self.grant(try Self.assertion(Claims(iss: account.email, aud: account.tokenURI), key: account.key)), to: harness)
            #expect(answer.status == 200, "\(answer.body)")
            #expect(answer.body.contains(#""expires_in":1800"#), "\(answer.body)")
            #expect(answer.body.contains(#""token_type":"Bearer""#))
        }
    }

    @Test("each flaw of an assertion is refused with Google's error", arguments: [
        ("another key", "invalid_grant", "Invalid JWT Signature."),
        ("issuer", "invalid_grant", "Invalid grant: account not found"),
        ("audience", "invalid_grant", "Invalid JWT: Failed audience check."),
        ("scope", "invalid_scope", "Invalid OAuth scope"),
        ("two hours", "invalid_grant", "Token must be a short-lived token (60 minutes)"),
        ("expired", "invalid_grant", "Token must be a short-lived token (60 minutes)"),
        ("HS256", "invalid_grant", "Invalid JWT: Token must be RS256"),
    ])
    func refused(_ flaw: String, _ error: String, _ description: String) async throws {
        try await withFCMSandbox { harness in
            let account = try Self.account(harness)
            var claims = Claims(iss: account.email, aud: account.tokenURI)
            var key = account.key
            var alg = "RS256"
            switch flaw {
            case "another key": key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            case "issuer": claims.iss = "someone@else.iam.gserviceaccount.com"
            case "audience": claims.aud = "https://example.com/token"
            case "scope": claims.scope = "https://www.googleapis.com/auth/userinfo.email"
            case "two hours": claims.lifetime = 7200
            case "expired": claims.iat -= 7200
            default: alg = "HS256"
            }
            let answer = try await Self.post(Self.grant(try Self.assertion(claims, key: key, alg: alg)), to: harness)
            #expect(answer.status == 400)
            #expect(answer.body.contains(#""error":"\#(error)""#), "\(answer.body)")
            #expect(answer.body.contains(description), "\(answer.body)")
            #expect(harness.sandbox.accessTokensIssued == 0)
        }
    }

    /// The endpoint's clock an hour ahead: an assertion dated by this machine's clock is refused in
    /// Google's words, and the answer's `Date` tells the endpoint's time; one dated by it is taken.
    @Test("a skewed token endpoint judges assertions by its own clock and says it in Date")
    func skewedClock() async throws {
        try await withFCMSandbox({ $0.clockOffset = .seconds(3600) }) { harness in
            let account = try Self.account(harness)
            let now = Int(Date().timeIntervalSince1970)
            let refused = try await Self.post(Self.grant(try Self.assertion(Claims(iss: account.email, aud: account.tokenURI, iat: now), key: account.key)), to: harness)
            #expect(refused.status == 400)
            #expect(refused.body.contains(#""error":"invalid_grant""#), "\(refused.body)")
            #expect(refused.body.contains("Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values"), "\(refused.body)")
            let endpointNow = try #require(refused.date.flatMap(HTTPDate.unixSeconds))
            #expect(endpointNow >= now + 3599 && endpointNow < now + 7200, "Date is the endpoint's clock, an hour ahead: \(String(describing: refused.date))")
            let taken = try await Self.post(Self.grant(try Self.assertion(Claims(iss: account.email, aud: account.tokenURI, iat: endpointNow), key: account.key)), to: harness)
            #expect(taken.status == 200, "\(taken.body)")
            #expect(harness.sandbox.accessTokensIssued == 1 && harness.sandbox.accessTokenGrantsRefused == 1)
        }
    }

    @Test("another grant type, or no assertion, is refused")
    func badForm() async throws {
        try await withFCMSandbox { harness in
            let other = try await Self.post("grant_type=client_credentials", to: harness)
            #expect(other.status == 400)
            #expect(other.body.contains(#""error":"unsupported_grant_type""#), "\(other.body)")
            let missing = try await Self.post("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", to: harness)
            #expect(missing.body.contains(#""error":"invalid_request""#), "\(missing.body)")
        }
    }

    @Test("a connection reset by the sandbox's fault is a retryable transport failure, and the next send works")
    func resetFault() async throws {
        try await withFCMSandbox { harness in
            let client = try harness.makeClient()
            let job = try fcmJob()
            #expect(await client.send(job, to: "device-0000000000000001").outcome == .sent)
            harness.sandbox.setFaults(.init(resetEveryRequests: 2))
            let reset = await client.send(job, to: "device-0000000000000002")
            #expect(reset.status == 0)
            if case .retryable = reset.outcome {} else if case .unavailable = reset.outcome {} else { Issue.record("\(reset.outcome)") }
            harness.sandbox.setFaults(.init())
            #expect(await client.send(job, to: "device-0000000000000003").outcome == .sent)
            await client.shutdown()
        }
    }
}
