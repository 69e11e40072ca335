import PushCore

/// The signed JWT a service account trades for an access token (Google, "Using OAuth 2.0 for Server
/// to Server Applications": "Creating a JWT"): RS256, `kid` the key's id, valid for an hour.
enum FCMAssertion {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google accepts at most an hour.
    static let lifetimeSeconds = 3600
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// - Parameter issuedAt: UNIX seconds (the wall clock: Google compares it with its own).
    static func make(for account: FCMServiceAccount, issuedAt: Int) throws(FCMConfigurationError) -> String {
        var header = JSONWriter(capacity: 96)
        header.field("alg", "RS256")
        header.field("typ", "JWT")
        header.field("kid", account.privateKeyID)
        var claims = JSONWriter(capacity: 256)
        claims.field("iss", account.clientEmail)
        claims.field("scope", scope)
        claims.field("aud", account.tokenURI)
        claims.field("iat", issuedAt)
        claims.field("exp", issuedAt + lifetimeSeconds)
        let signingInput = Base64.encode(header.finish(), urlSafe: true, padded: false) + "."
            + Base64.encode(claims.finish(), urlSafe: true, padded: false)
        let signature = try account.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64.encode(signature, urlSafe: true, padded: false)
    }

    /// The token request's form body. The assertion is base64url and dots: nothing to escape.
    static func formBody(assertion: String) -> [UInt8] {
        Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
    }
}
