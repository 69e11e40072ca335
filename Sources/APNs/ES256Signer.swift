internal import COpenSSL
import PushCore

/// Signs with an APNs `.p8` key (PKCS#8 PEM, P-256): the JWS ES256 signature is the raw 64-byte
/// r‖s, not OpenSSL's DER (APNs answers InvalidProviderToken to DER).
final class ES256Signer: @unchecked Sendable {
    // EVP_PKEY is reference counted and safe to use from several threads for signing with separate
    // EVP_MD_CTX objects (OpenSSL 3 threading rules); it is never mutated after init.
    private let key: OpaquePointer

    init(pem: [UInt8]) throws(APNsConfigurationError) {
        // Apple's .p8 keys are never encrypted: an encrypted one is refused, never prompted for.
        var encrypted: Int32 = 0
        let parsed: OpaquePointer? = pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, pw_pem_refuse_passphrase, &encrypted)
        }
        guard let parsed else {
            if encrypted != 0 {
                _ = OpenSSLErrors.drain()
                throw APNsConfigurationError("the APNs key is encrypted; Apple's .p8 keys are not: give the key as downloaded (or decrypt it with `openssl pkcs8 -in key.p8 -out plain.p8`)")
            }
            throw APNsConfigurationError("the APNs key is not a PEM private key (expected the .p8 file from Apple: \"-----BEGIN PRIVATE KEY-----\"): \(OpenSSLErrors.drain())")
        }
        var groupName = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_is_a(parsed, "EC") == 1,
              EVP_PKEY_get_group_name(parsed, &groupName, groupName.count, &length) == 1,
              String(decoding: groupName.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1" else {
            EVP_PKEY_free(parsed)
            throw APNsConfigurationError("the APNs key must be an EC P-256 key (ES256)")
        }
        key = parsed
    }

    deinit { EVP_PKEY_free(key) }

    /// The public half as DER (SubjectPublicKeyInfo): names the key without revealing it.
    func publicKeyDER() -> [UInt8] {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return [] }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == length ? der : []
    }

    func sign(_ message: [UInt8]) throws(APNsConfigurationError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw APNsConfigurationError("out of memory") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw APNsConfigurationError("cannot initialise ES256 signing: \(OpenSSLErrors.drain())")
        }
        var der = [UInt8](repeating: 0, count: 80)
        var derLength = der.count
        let signed = message.withUnsafeBufferPointer { buffer in
            EVP_DigestSign(context, &der, &derLength, buffer.baseAddress, buffer.count)
        }
        guard signed == 1 else { throw APNsConfigurationError("ES256 signing failed: \(OpenSSLErrors.drain())") }
        // DER length varies (70–72 bytes), so decode it rather than slicing.
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, derLength)
        }
        guard let signature else { throw APNsConfigurationError("cannot decode the ECDSA signature") }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var raw = [UInt8](repeating: 0, count: 64)
        raw.withUnsafeMutableBufferPointer { buffer in
            _ = BN_bn2binpad(r, buffer.baseAddress, 32)
            _ = BN_bn2binpad(s, buffer.baseAddress! + 32, 32)
        }
        return raw
    }

    /// Whether `signature` (raw r‖s, as JWS carries it) is this key's ES256 signature of `message`.
    func verify(_ message: [UInt8], signature: [UInt8]) -> Bool {
        guard signature.count == 64, let parsed = ECDSA_SIG_new() else { return false }
        defer { ECDSA_SIG_free(parsed) }
        let (r, s) = signature.withUnsafeBufferPointer { buffer in
            (BN_bin2bn(buffer.baseAddress, 32, nil), BN_bin2bn(buffer.baseAddress! + 32, 32, nil))
        }
        // ECDSA_SIG_set0 takes both numbers over; on failure they are ours to free.
        guard let r, let s, ECDSA_SIG_set0(parsed, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return false
        }
        var derPointer: UnsafeMutablePointer<UInt8>?
        let derLength = i2d_ECDSA_SIG(parsed, &derPointer)
        guard derLength > 0, let derPointer else { return false }
        defer { CRYPTO_free(derPointer, #fileID, #line) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            _ = OpenSSLErrors.drain()
            return false
        }
        let verified = message.withUnsafeBufferPointer { buffer in
            EVP_DigestVerify(context, derPointer, Int(derLength), buffer.baseAddress, buffer.count)
        }
        if verified != 1 { _ = OpenSSLErrors.drain() }
        return verified == 1
    }
}

enum OpenSSLErrors {
    /// Empties OpenSSL's per-thread error queue into one line.
    static func drain() -> String {
        var messages = [String]()
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error recorded" : messages.joined(separator: "; ")
    }
}
