import _CryptoExtras
import Foundation
import NIOConcurrencyHelpers
import PushCore

/// The sandbox's OAuth side: the token endpoint's JWT-bearer grant (Google, "Using OAuth 2.0 for
/// Server to Server Applications": the assertion's RS256 signature, `iss`, `aud`, `scope`, `iat` and
/// `exp`), and the bearer tokens it issued, each with its expiry, which `messages:send` checks.
/// Control requests expire every token (a client must fetch again) or revoke the service account
/// (the endpoint refuses it, as Google does for a deleted key). Shared by every connection.
final class FCMSandboxCredentials: Sendable {
    static let scopes: Set<String> = ["https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform"]
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let googleTokenEndpoint = "https://oauth2.googleapis.com/token"
    /// Google accepts an assertion valid for at most an hour, and `iat` a little ahead of its clock.
    static let maximumAssertionLifetime = 3600
    static let allowedClockSkew = 300

    private struct State {
        var issued: [String: ContinuousClock.Instant] = [:]
        var revoked = false
        var tokensIssued = 0
        var grantsRefused = 0
    }

    let clientEmail: String
    let keyID: String
    let tokenURI: String
    private let publicKey: _RSA.Signing.PublicKey
    private let tokenLifetime: Duration
    private let state = NIOLockedValueBox(State())

    init(clientEmail: String, keyID: String, tokenURI: String, publicKey: _RSA.Signing.PublicKey, tokenLifetime: Duration) {
        self.clientEmail = clientEmail
        self.keyID = keyID
        self.tokenURI = tokenURI
        self.publicKey = publicKey
        self.tokenLifetime = tokenLifetime
    }

    /// What the token endpoint answers to a form body: status and JSON.
    func grant(formBody: [UInt8], epochSeconds: Int, now: ContinuousClock.Instant) -> (status: Int, json: String) {
        let form = Self.form(formBody)
        guard let grantType = form["grant_type"] else { return Self.oauthError(400, "invalid_request", "Missing required parameter: grant_type") }
        guard grantType == Self.grantType else { return Self.oauthError(400, "unsupported_grant_type", "Invalid grant_type: \(grantType.prefix(80))") }
        guard let assertion = form["assertion"] else { return Self.oauthError(400, "invalid_request", "Missing required parameter: assertion") }
        if let refusal = self.verify(assertion, epochSeconds: epochSeconds) {
            self.state.withLockedValue { $0.grantsRefused += 1 }
            return Self.oauthError(400, refusal.error, refusal.description)
        }
        var random = SystemRandomNumberGenerator()
        let token = "ya29.sandbox." + (0..<4).map { _ in String(random.next() as UInt64, radix: 16) }.joined()
        let refused = self.state.withLockedValue { state -> Bool in
            if state.revoked { return true }
            state.issued[token] = now + self.tokenLifetime
            state.tokensIssued += 1
            return false
        }
        if refused {
            self.state.withLockedValue { $0.grantsRefused += 1 }
            return Self.oauthError(400, "invalid_grant", "Invalid JWT Signature.")
        }
        return (200, #"{"access_token":"\#(token)","expires_in":\#(self.tokenLifetime.components.seconds),"token_type":"Bearer"}"#)
    }

    enum BearerCheck: Equatable {
        case valid(token: String)
        /// FCM's message for a 401 without an FcmError detail.
        case refused(String)
    }

    /// `authorization` must be `Bearer <a token this sandbox issued, not expired>`.
    func check(authorization: String?, now: ContinuousClock.Instant) -> BearerCheck {
        guard let authorization, authorization.hasPrefix("Bearer ") else {
            return .refused("Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
        }
        let token = String(authorization.dropFirst("Bearer ".count))
        let known = self.state.withLockedValue { state -> Bool in
            guard !state.revoked, let expiry = state.issued[token] else { return false }
            if now >= expiry {
                state.issued[token] = nil
                return false
            }
            return true
        }
        guard known else {
            return .refused("Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
        }
        return .valid(token: token)
    }

    /// Every issued token stops working now; new ones are issued as before.
    func expireAll() {
        self.state.withLockedValue { $0.issued.removeAll() }
    }

    /// The service account's key is revoked (tokens refused, none issued) until `restore`.
    func setRevoked(_ revoked: Bool) {
        self.state.withLockedValue { state in
            state.revoked = revoked
            if revoked { state.issued.removeAll() }
        }
    }

    var tokensIssued: Int { self.state.withLockedValue { $0.tokensIssued } }
    /// Grants refused (a bad assertion, or the account revoked); malformed requests are not counted.
    var grantsRefused: Int { self.state.withLockedValue { $0.grantsRefused } }

    struct Refusal: CustomStringConvertible {
        let error: String
        let description: String
    }

    private func verify(_ assertion: String, epochSeconds: Int) -> Refusal? {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerData = ProviderTokenVerifier.base64URLDecode(parts[0]),
              let claimsData = ProviderTokenVerifier.base64URLDecode(parts[1]),
              let signature = ProviderTokenVerifier.base64URLDecode(parts[2]),
              let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return Refusal(error: "invalid_grant", description: "Invalid JWT: the assertion is not three base64url JSON parts") }
        guard header["alg"] as? String == "RS256" else { return Refusal(error: "invalid_grant", description: "Invalid JWT: Token must be RS256") }
        let signingInput = assertion.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)
        guard header["kid"].map({ $0 as? String == self.keyID }) ?? true,
              self.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: Array(signingInput), padding: .insecurePKCS1v1_5)
        else { return Refusal(error: "invalid_grant", description: "Invalid JWT Signature.") }
        guard claims["iss"] as? String == self.clientEmail else {
            return Refusal(error: "invalid_grant", description: "Invalid grant: account not found")
        }
        // Google's endpoint takes its own URL as the audience whatever token_uri says (google-auth
        // always sends it), and the token_uri the key file names (what this project's client sends).
        guard let audience = claims["aud"] as? String, audience == self.tokenURI || audience == Self.googleTokenEndpoint else {
            return Refusal(error: "invalid_grant", description: "Invalid JWT: Failed audience check. The right audience is \(self.tokenURI)")
        }
        let scopes = Set(((claims["scope"] as? String) ?? "").split(separator: " ").map(String.init))
        guard !scopes.isDisjoint(with: Self.scopes) else {
            return Refusal(error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided: FCM needs \(Self.scopes.sorted().first ?? "")")
        }
        guard let iatNumber = claims["iat"] as? NSNumber, let iat = ProviderTokenVerifier.seconds(iatNumber),
              let expNumber = claims["exp"] as? NSNumber, let exp = ProviderTokenVerifier.seconds(expNumber),
              exp > iat, exp - iat <= Self.maximumAssertionLifetime, iat <= epochSeconds + Self.allowedClockSkew, exp > epochSeconds
        else {
            return Refusal(error: "invalid_grant", description: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
        }
        return nil
    }

    /// An application/x-www-form-urlencoded body: `+` is a space, `%XX` a byte.
    static func form(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) -> String? in try? ServiceURL.percentDecoded(text.replacingOccurrences(of: "+", with: " "), part: "form") }
            guard let name = decode(parts[0]) else { continue }
            fields[name] = parts.count == 2 ? decode(parts[1]) : ""
        }
        return fields
    }

    static func oauthError(_ status: Int, _ error: String, _ description: String) -> (status: Int, json: String) {
        (status, "{\"error\":\(FCMSandboxJSON.quoted(error)),\"error_description\":\(FCMSandboxJSON.quoted(description))}")
    }
}

/// JSON string literals for the FCM mode's answers.
enum FCMSandboxJSON {
    static func quoted(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 16)
        writer.field("v", text)
        let bytes = writer.finish()
        // {"v":"…"} → "…"
        return String(decoding: bytes.dropFirst(5).dropLast(), as: UTF8.self)
    }
}
