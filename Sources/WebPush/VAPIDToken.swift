import PushCore

/// A signed VAPID JWT (RFC 8292 §2): JWS compact serialisation with ES256 (RFC 7515 §7.1,
/// RFC 7518 §3.4), claims `aud`, `exp` and `sub`.
struct VAPIDToken {
    let jwt: String
    /// Unix seconds, as in the `exp` claim.
    let expiresAt: Int

    /// `{"typ":"JWT","alg":"ES256"}`, the same for every token.
    private static let encodedHeader = Base64.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8), urlSafe: true, padded: false)

    init(audience: WebPushEndpointOrigin, expiresAt: Int, subject: VAPIDSubject, key: VAPIDKey) throws(WebPushError) {
        var claims = JSONWriter(capacity: 128)
        claims.field("aud", audience.value)
        claims.field("exp", expiresAt)
        claims.field("sub", subject.value)
        let signingInput = Self.encodedHeader + "." + Base64.encode(claims.finish(), urlSafe: true, padded: false)
        let signature = try key.sign(Array(signingInput.utf8))
        jwt = signingInput + "." + Base64.encode(signature, urlSafe: true, padded: false)
        self.expiresAt = expiresAt
    }
}
