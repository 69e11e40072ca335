internal import COpenSSL

// The only file of this module that touches OpenSSL or raw pointers: the service account's RSA
// key and RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signatures, through OpenSSL 3's EVP interfaces.

/// Signs OAuth assertions with a service account's private key (PEM, PKCS#8, RSA).
final class OpenSSLRS256Signer: @unchecked Sendable {
    // An EVP_PKEY may sign from several threads at once, each with its own EVP_MD_CTX (OpenSSL 3
    // threading rules); this one is never changed after init.
    private let key: OpaquePointer

    /// Why a PEM is not a usable key, without the key: the caller names the field.
    struct KeyProblem: Error {
        let message: String
    }

    /// Google signs with 2048-bit keys; anything shorter is refused by its token endpoint anyway.
    static let minimumBits: Int32 = 2048

    init(pem: [UInt8]) throws(KeyProblem) {
        // Service-account keys are never encrypted: an encrypted one is refused, never prompted for.
        var encrypted: Int32 = 0
        let parsed: OpaquePointer? = pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, pw_pem_refuse_passphrase, &encrypted)
        }
        // OpenSSL's reason names no secret, but says little a person can act on: dropped.
        ERR_clear_error()
        guard let parsed else {
            throw KeyProblem(message: encrypted != 0 ? "is an encrypted PEM key; service-account keys are not encrypted" : "not an RSA private key in PEM")
        }
        guard EVP_PKEY_is_a(parsed, "RSA") == 1 else {
            EVP_PKEY_free(parsed)
            throw KeyProblem(message: "not an RSA private key in PEM (RS256 needs RSA)")
        }
        let bits = EVP_PKEY_get_bits(parsed)
        guard bits >= Self.minimumBits else {
            EVP_PKEY_free(parsed)
            throw KeyProblem(message: "is a \(bits)-bit RSA key; at least \(Self.minimumBits) bits are needed")
        }
        key = parsed
    }

    deinit { EVP_PKEY_free(key) }

    /// The RS256 signature of `message`: used as it is in a JWS (no DER to undo, unlike ECDSA).
    func sign(_ message: [UInt8]) throws(KeyProblem) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw KeyProblem(message: "out of memory") }
        defer { EVP_MD_CTX_free(context) }
        // PKCS#1 v1.5 padding is OpenSSL's default for RSA signatures.
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            ERR_clear_error()
            throw KeyProblem(message: "cannot start RS256 signing")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1, length > 0 else {
            ERR_clear_error()
            throw KeyProblem(message: "cannot size the RS256 signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            ERR_clear_error()
            throw KeyProblem(message: "RS256 signing failed")
        }
        return Array(signature.prefix(length))
    }

    /// The public half as PEM (SubjectPublicKeyInfo): what a verifier needs, never the key itself.
    func publicKeyPEM() -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key) == 1 else {
            ERR_clear_error()
            return ""
        }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let read = BIO_read(bio, &bytes, Int32(bytes.count))
        return read > 0 ? String(decoding: bytes.prefix(Int(read)), as: UTF8.self) : ""
    }
}
