/// Encrypts Web Push messages (RFC 8291, `Content-Encoding: aes128gcm`): each message gets a new
/// ephemeral P-256 key pair and a new salt, and becomes one record with no padding.
///
/// Keeps OpenSSL contexts from message to message, so it is not thread-safe: give each thread or
/// owner its own. Per message it costs one key generation, one ECDH and five HMACs.
public final class WebPushMessageEncryptor {
    private let primitives: OpenSSLWebPushPrimitives

    public init() throws(WebPushError) {
        primitives = try OpenSSLWebPushPrimitives()
    }

    /// The request body for `plaintext` to the subscription with `keys`.
    public func encrypt(_ plaintext: [UInt8], for keys: WebPushSubscriptionKeys) throws(WebPushError) -> [UInt8] {
        try Self.checkLength(of: plaintext)
        let senderKey = try primitives.generateEphemeralKey()
        let salt = try OpenSSLWebPushPrimitives.randomBytes(count: WebPushRecordFormat.saltLength)
        return try encrypt(plaintext, for: keys, senderKey: senderKey, salt: salt)
    }

    /// With the sender's key and the salt given, for reproducing RFC 8291 Appendix A in tests.
    /// Reusing either for a second message would break the encryption: never call it otherwise.
    func encrypt(_ plaintext: [UInt8], for keys: WebPushSubscriptionKeys, senderPrivateKey: [UInt8], salt: [UInt8]) throws(WebPushError) -> [UInt8] {
        try Self.checkLength(of: plaintext)
        precondition(salt.count == WebPushRecordFormat.saltLength, "the salt is 16 bytes")
        guard let senderKey = try primitives.ephemeralKey(privateScalar: senderPrivateKey) else {
            throw WebPushError(.library, "the given sender key is not a P-256 private key")
        }
        return try encrypt(plaintext, for: keys, senderKey: senderKey, salt: salt)
    }

    private func encrypt(_ plaintext: [UInt8], for keys: WebPushSubscriptionKeys, senderKey: P256EphemeralKey, salt: [UInt8]) throws(WebPushError) -> [UInt8] {
        let senderPublicKey = senderKey.publicKey
        let ecdhSecret = try primitives.sharedSecret(key: senderKey, peer: keys.userAgentKey)
        let contentKeys = try WebPushContentKeys(
            ecdhSecret: ecdhSecret, authSecret: keys.auth, userAgentPublicKey: keys.p256dh,
            senderPublicKey: senderPublicKey, salt: salt, using: primitives)
        var body = [UInt8]()
        body.reserveCapacity(WebPushRecordFormat.headerLength + plaintext.count + 1 + WebPushRecordFormat.tagLength)
        WebPushRecordFormat.appendHeader(salt: salt, senderPublicKey: senderPublicKey, to: &body)
        // The only record is record 0, whose nonce is the derived one unchanged (RFC 8188 §2.3).
        try primitives.sealRecord(key: contentKeys.contentEncryptionKey, nonce: contentKeys.nonce, plaintext: plaintext,
                                  delimiter: WebPushRecordFormat.lastRecordDelimiter, appendingTo: &body)
        return body
    }

    private static func checkLength(of plaintext: [UInt8]) throws(WebPushError) {
        guard plaintext.count <= WebPushRecordFormat.maximumPlaintextLength else {
            throw WebPushError(.payloadTooLarge, field: "payload",
                               "is \(plaintext.count) bytes; Web Push carries at most \(WebPushRecordFormat.maximumPlaintextLength)")
        }
    }
}
