/// The AES-128-GCM key and nonce of one message, derived as RFC 8291 §3.3–3.4 and RFC 8188 §2.2–2.3
/// say. Every HKDF-Expand here asks for at most 32 bytes, one HMAC block, so it is
/// HMAC(PRK, info ‖ 0x01) cut to length (RFC 5869 §2.3); HKDF-Extract is HMAC(salt, IKM).
struct WebPushContentKeys {
    let contentEncryptionKey: [UInt8]
    let nonce: [UInt8]

    // The info strings with their 0x00 terminator and HKDF's block counter 0x01 already appended.
    private static let keyInfoPrefix = Array("WebPush: info".utf8) + [0x00]
    private static let contentEncryptionKeyInfo = Array("Content-Encoding: aes128gcm".utf8) + [0x00, 0x01]
    private static let nonceInfo = Array("Content-Encoding: nonce".utf8) + [0x00, 0x01]

    init(ecdhSecret: [UInt8], authSecret: [UInt8], userAgentPublicKey: [UInt8], senderPublicKey: [UInt8],
         salt: [UInt8], using primitives: OpenSSLWebPushPrimitives) throws(WebPushError) {
        // RFC 8291 §3.3: the auth secret and both public keys go into the input keying material.
        let authenticatedSecret = try primitives.hmacSHA256(key: authSecret, message: ecdhSecret)
        var keyInfo = Self.keyInfoPrefix
        keyInfo.reserveCapacity(Self.keyInfoPrefix.count + 65 + 65 + 1)
        keyInfo.append(contentsOf: userAgentPublicKey)
        keyInfo.append(contentsOf: senderPublicKey)
        keyInfo.append(0x01)
        let inputKeyingMaterial = try primitives.hmacSHA256(key: authenticatedSecret, message: keyInfo)
        // RFC 8188 §2.2–2.3: the message's salt makes the key and nonce unique to it.
        let pseudoRandomKey = try primitives.hmacSHA256(key: salt, message: inputKeyingMaterial)
        var key = try primitives.hmacSHA256(key: pseudoRandomKey, message: Self.contentEncryptionKeyInfo)
        key.removeLast(32 - 16)
        var nonce = try primitives.hmacSHA256(key: pseudoRandomKey, message: Self.nonceInfo)
        nonce.removeLast(32 - 12)
        contentEncryptionKey = key
        self.nonce = nonce
    }
}
