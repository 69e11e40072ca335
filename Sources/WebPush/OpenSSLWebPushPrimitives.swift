internal import COpenSSL

// The only file of this module that touches OpenSSL or raw pointers: P-256 keys, ECDH,
// HMAC-SHA-256, AES-128-GCM, ES256 and randomness, through OpenSSL 3's EVP interfaces, and the
// per-message ECDH through its EC_POINT arithmetic (P256Group says why).
// Everything that knows Web Push (RFC 8291, RFC 8292) is pure Swift and calls these.

/// A P-256 key: a key pair (ephemeral or VAPID) or a subscription's public key.
final class P256Key: @unchecked Sendable {
    // An EVP_PKEY may be used from several threads at once for deriving and signing, each with its
    // own EVP_PKEY_CTX / EVP_MD_CTX (OpenSSL 3 threading rules); this one is never changed after init.
    fileprivate let raw: OpaquePointer

    fileprivate init(taking raw: OpaquePointer) { self.raw = raw }

    deinit { EVP_PKEY_free(raw) }

    /// 0x04 ‖ X ‖ Y (SEC 1 §2.3.3), 65 bytes.
    func uncompressedPublicKey() throws(WebPushError) -> [UInt8] {
        var point = [UInt8](repeating: 0, count: P256Key.uncompressedPointLength)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(raw, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, &point, point.count, &length) == 1,
              length == P256Key.uncompressedPointLength else {
            throw libraryError("cannot read a P-256 public key")
        }
        return point
    }

    /// The private scalar, big-endian, left-padded to 32 bytes.
    func privateScalar() throws(WebPushError) -> [UInt8] {
        var scalar: OpaquePointer?
        guard EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_PRIV_KEY, &scalar) == 1, let scalar else {
            throw libraryError("cannot read a P-256 private key")
        }
        defer { BN_clear_free(scalar) }
        var bytes = [UInt8](repeating: 0, count: P256Key.scalarLength)
        guard BN_bn2binpad(scalar, &bytes, Int32(bytes.count)) == Int32(bytes.count) else {
            throw libraryError("cannot write a P-256 private key")
        }
        return bytes
    }

    static let uncompressedPointLength = 65
    static let scalarLength = 32

    /// The key pair whose private scalar is `scalar` (32 bytes, big-endian), or nil when the scalar
    /// is not in 1..<n. OpenSSL's import does not compute the public point from the scalar, so it is
    /// computed here (d·G) and imported alongside.
    static func keyPair(privateScalar scalar: [UInt8]) throws(WebPushError) -> P256Key? {
        guard scalar.count == scalarLength else { return nil }
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { throw libraryError("cannot load the P-256 group") }
        defer { EC_GROUP_free(group) }
        // A secure BIGNUM: OSSL_PARAM_BLD then keeps its copy of the scalar in the block that
        // OSSL_PARAM_free clears (OpenSSL 3.0 has no OSSL_PARAM_clear_free).
        guard let secret = BN_secure_new() else { throw libraryError("out of memory") }
        defer { BN_clear_free(secret) }
        guard BN_bin2bn(scalar, Int32(scalar.count), secret) != nil else { throw libraryError("out of memory") }
        guard BN_is_zero(secret) == 0, BN_cmp(secret, EC_GROUP_get0_order(group)) < 0 else { return nil }
        guard let point = EC_POINT_new(group) else { throw libraryError("out of memory") }
        defer { EC_POINT_free(point) }
        var publicPoint = [UInt8](repeating: 0, count: uncompressedPointLength)
        guard EC_POINT_mul(group, point, secret, nil, nil, nil) == 1,
              EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &publicPoint, publicPoint.count, nil) == publicPoint.count else {
            throw libraryError("cannot compute a P-256 public key")
        }
        // The builder copies values but keeps the names' pointers: ParamName's are static.
        guard let builder = OSSL_PARAM_BLD_new() else { throw libraryError("out of memory") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard OSSL_PARAM_BLD_push_utf8_string(builder, ParamName.groupName.cString, ParamName.prime256v1.cString, 0) == 1,
              OSSL_PARAM_BLD_push_octet_string(builder, ParamName.publicKey.cString, publicPoint, publicPoint.count) == 1,
              OSSL_PARAM_BLD_push_BN(builder, ParamName.privateKey.cString, secret) == 1,
              let params = OSSL_PARAM_BLD_to_param(builder) else {
            throw libraryError("cannot describe a P-256 key pair")
        }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw libraryError("cannot create an EC key context") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, pw_EVP_PKEY_KEYPAIR(), params) == 1, let key else {
            throw libraryError("cannot import a P-256 key pair")
        }
        return P256Key(taking: key)
    }

    /// A new key pair from the default random generator (a VAPID key; messages use
    /// `P256EphemeralKey`).
    static func generate() throws(WebPushError) -> P256Key {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw libraryError("cannot create an EC key context") }
        defer { EVP_PKEY_CTX_free(context) }
        var params = [
            OSSL_PARAM_construct_utf8_string(ParamName.groupName.cString, ParamName.prime256v1.mutableCString, 0),
            OSSL_PARAM_construct_end(),
        ]
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_params(context, &params) == 1,
              EVP_PKEY_generate(context, &key) == 1, let key else {
            throw libraryError("cannot generate a P-256 key")
        }
        return P256Key(taking: key)
    }

    /// The JWS ES256 signature (RFC 7518 §3.4) of `message`: SHA-256, ECDSA, and the raw 64-byte
    /// r ‖ s that JWS wants instead of OpenSSL's DER.
    func signES256(_ message: [UInt8]) throws(WebPushError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw libraryError("out of memory") }
        defer { EVP_MD_CTX_free(context) }
        // 72 bytes is the longest DER ECDSA-P256 signature.
        var der = [UInt8](repeating: 0, count: 72)
        var derLength = der.count
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, raw) == 1,
              EVP_DigestSign(context, &der, &derLength, message, message.count) == 1 else {
            throw libraryError("ES256 signing failed")
        }
        // The DER length varies with the leading bits of r and s: decode, never slice.
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, derLength)
        }
        guard let signature else { throw libraryError("cannot decode an ECDSA signature") }
        defer { ECDSA_SIG_free(signature) }
        let r = ECDSA_SIG_get0_r(signature)
        let s = ECDSA_SIG_get0_s(signature)
        var raw = [UInt8](repeating: 0, count: 2 * Self.scalarLength)
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            (BN_bn2binpad(r, buffer.baseAddress, Int32(Self.scalarLength)),
             BN_bn2binpad(s, buffer.baseAddress! + Self.scalarLength, Int32(Self.scalarLength)))
        }
        guard written == (Int32(Self.scalarLength), Int32(Self.scalarLength)) else { throw libraryError("cannot write an ES256 signature") }
        return raw
    }
}

/// The P-256 group for the per-message ECDH, built once per process. Building it costs more than a
/// message's hashing and encryption together, and going through EVP_PKEY (a key object, a provider
/// lookup and a context per step) cost more than the same two scalar multiplications done here
/// (measured: docs/evidence/code-measurements.md#p-256-ecdh). The math is the one EVP runs
/// underneath: EC_POINT_mul with the secret scalar, which for P-256 is OpenSSL's constant-time
/// nistz256 code.
///
/// OpenSSL never changes a group after it is made (every EC_POINT function takes it `const`), so
/// threads share it; each caller brings its own BN_CTX.
final class P256Group: @unchecked Sendable {
    fileprivate let raw: OpaquePointer         // EC_GROUP
    /// n − 1: a scalar in 1..<n is a random number below this, plus one.
    fileprivate let orderMinusOne: OpaquePointer  // BIGNUM

    static let shared: P256Group? = P256Group()

    private init?() {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        guard let bound = BN_dup(EC_GROUP_get0_order(group)), BN_sub_word(bound, 1) == 1 else {
            EC_GROUP_free(group)
            return nil
        }
        raw = group
        orderMinusOne = bound
    }

    deinit {
        BN_free(orderMinusOne)
        EC_GROUP_free(raw)
    }

    static func get() throws(WebPushError) -> P256Group {
        guard let shared else { throw libraryError("cannot load the P-256 group") }
        return shared
    }
}

/// A point on P-256: a subscription's `p256dh`, imported once and checked to lie on the curve.
/// Never changed after import, so several threads may multiply by it at once.
final class P256Point: @unchecked Sendable {
    fileprivate let raw: OpaquePointer  // EC_POINT of P256Group.shared

    private init(taking raw: OpaquePointer) { self.raw = raw }

    deinit { EC_POINT_free(raw) }

    /// The point 0x04 ‖ X ‖ Y, or nil when it is not on P-256: OpenSSL's import checks the
    /// coordinates are below the field prime and satisfy the curve equation. P-256's cofactor is 1,
    /// so that is the whole public-key check ECDH needs (SEC 1 §3.2.2.1).
    static func importing(uncompressed point: [UInt8]) throws(WebPushError) -> P256Point? {
        guard point.count == P256Key.uncompressedPointLength, point.first == 0x04 else { return nil }
        let group = try P256Group.get()
        guard let raw = EC_POINT_new(group.raw) else { throw libraryError("out of memory") }
        guard EC_POINT_oct2point(group.raw, raw, point, point.count, nil) == 1 else {
            EC_POINT_free(raw)
            ERR_clear_error()
            return nil
        }
        return P256Point(taking: raw)
    }
}

/// One message's sender key pair: a secret scalar in 1..<n and its public point, 65 bytes.
/// The scalar is a secure BIGNUM, cleared when freed.
final class P256EphemeralKey {
    fileprivate let scalar: OpaquePointer  // BIGNUM
    let publicKey: [UInt8]

    fileprivate init(taking scalar: OpaquePointer, publicKey: [UInt8]) {
        self.scalar = scalar
        self.publicKey = publicKey
    }

    deinit { BN_clear_free(scalar) }
}

/// The contexts one encryption needs, kept from message to message: a BN_CTX for the P-256
/// arithmetic, HMAC-SHA-256 and AES-128-GCM, each fetched from the provider once instead of per call.
/// Not thread-safe (OpenSSL contexts are not): one per thread or owner.
final class OpenSSLWebPushPrimitives {
    // Contexts first, then what they were made from; each context holds its own reference, so the
    // order is for the reader, not for OpenSSL.
    private let bnContext: OpaquePointer         // BN_CTX
    private let macContext: OpaquePointer        // EVP_MAC_CTX
    private let cipherContext: OpaquePointer     // EVP_CIPHER_CTX
    private let mac: OpaquePointer               // EVP_MAC
    private let cipher: OpaquePointer            // EVP_CIPHER

    init() throws(WebPushError) {
        var bnContext: OpaquePointer?, mac: OpaquePointer?, macContext: OpaquePointer?
        var cipher: OpaquePointer?, cipherContext: OpaquePointer?
        // A failing init frees what it made: nothing is handed to self until every part exists.
        var complete = false
        defer {
            if !complete {
                BN_CTX_free(bnContext)
                EVP_MAC_CTX_free(macContext)
                EVP_CIPHER_CTX_free(cipherContext)
                EVP_MAC_free(mac)
                EVP_CIPHER_free(cipher)
            }
        }
        bnContext = BN_CTX_new()
        mac = EVP_MAC_fetch(nil, "HMAC", nil)
        macContext = mac.flatMap { EVP_MAC_CTX_new($0) }
        var digest = [
            OSSL_PARAM_construct_utf8_string(ParamName.digest.cString, ParamName.sha256.mutableCString, 0),
            OSSL_PARAM_construct_end(),
        ]
        guard let macContext, EVP_MAC_CTX_set_params(macContext, &digest) == 1 else {
            throw libraryError("cannot set up HMAC-SHA-256")
        }
        cipher = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil)
        cipherContext = EVP_CIPHER_CTX_new()
        // The cipher is set once; each message then sets only its key and nonce, which spares
        // OpenSSL tearing down and rebuilding the provider's cipher context per message.
        guard let bnContext, let mac, let cipher, let cipherContext,
              EVP_EncryptInit_ex2(cipherContext, cipher, nil, nil, nil) == 1 else { throw libraryError("cannot set up AES-128-GCM") }
        self.bnContext = bnContext
        self.mac = mac
        self.macContext = macContext
        self.cipher = cipher
        self.cipherContext = cipherContext
        complete = true
    }

    deinit {
        BN_CTX_free(bnContext)
        EVP_MAC_CTX_free(macContext)
        EVP_CIPHER_CTX_free(cipherContext)
        EVP_MAC_free(mac)
        EVP_CIPHER_free(cipher)
    }

    /// A new sender key pair: a scalar from OpenSSL's private random generator, and d·G.
    func generateEphemeralKey() throws(WebPushError) -> P256EphemeralKey {
        let group = try P256Group.get()
        guard let scalar = BN_secure_new() else { throw libraryError("out of memory") }
        guard BN_priv_rand_range_ex(scalar, group.orderMinusOne, 0, bnContext) == 1, BN_add_word(scalar, 1) == 1 else {
            BN_clear_free(scalar)
            throw libraryError("the random generator failed")
        }
        return try ephemeralKey(taking: scalar, group: group)
    }

    /// The sender key pair of a given scalar (RFC 8291 Appendix A's, in tests), or nil when the
    /// scalar is not in 1..<n.
    func ephemeralKey(privateScalar bytes: [UInt8]) throws(WebPushError) -> P256EphemeralKey? {
        guard bytes.count == P256Key.scalarLength else { return nil }
        let group = try P256Group.get()
        guard let scalar = BN_secure_new() else { throw libraryError("out of memory") }
        guard BN_bin2bn(bytes, Int32(bytes.count), scalar) != nil, BN_is_zero(scalar) == 0, BN_cmp(scalar, group.orderMinusOne) <= 0 else {
            BN_clear_free(scalar)
            return nil
        }
        return try ephemeralKey(taking: scalar, group: group)
    }

    /// Takes `scalar`: the key frees it, or this does when the public point cannot be made.
    private func ephemeralKey(taking scalar: OpaquePointer, group: P256Group) throws(WebPushError) -> P256EphemeralKey {
        var publicKey = [UInt8](repeating: 0, count: P256Key.uncompressedPointLength)
        let point = EC_POINT_new(group.raw)
        defer { EC_POINT_free(point) }
        guard let point, EC_POINT_mul(group.raw, point, scalar, nil, nil, bnContext) == 1,
              EC_POINT_point2oct(group.raw, point, POINT_CONVERSION_UNCOMPRESSED, &publicKey, publicKey.count, bnContext) == publicKey.count else {
            BN_clear_free(scalar)
            throw libraryError("cannot compute a P-256 public key")
        }
        return P256EphemeralKey(taking: scalar, publicKey: publicKey)
    }

    /// ECDH on P-256: the X coordinate of scalar·peer, 32 bytes (SEC 1 §3.3.1). The peer was
    /// checked to be on the curve when imported, and P-256's cofactor is 1: no second check.
    func sharedSecret(key: P256EphemeralKey, peer: P256Point) throws(WebPushError) -> [UInt8] {
        let group = try P256Group.get()
        var secret = [UInt8](repeating: 0, count: P256Key.scalarLength)
        let product = EC_POINT_new(group.raw)
        defer { EC_POINT_clear_free(product) }
        BN_CTX_start(bnContext)
        defer { BN_CTX_end(bnContext) }
        let x = BN_CTX_get(bnContext)
        defer { BN_clear(x) }
        guard let product, let x, EC_POINT_mul(group.raw, product, nil, peer.raw, key.scalar, bnContext) == 1,
              EC_POINT_is_at_infinity(group.raw, product) == 0,
              EC_POINT_get_affine_coordinates(group.raw, product, x, nil, bnContext) == 1,
              BN_bn2binpad(x, &secret, Int32(secret.count)) == Int32(secret.count) else {
            throw libraryError("ECDH failed")
        }
        return secret
    }

    /// HMAC-SHA-256(key, message), 32 bytes.
    func hmacSHA256(key: [UInt8], message: [UInt8]) throws(WebPushError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length = 0
        guard EVP_MAC_init(macContext, key, key.count, nil) == 1,
              EVP_MAC_update(macContext, message, message.count) == 1,
              EVP_MAC_final(macContext, &output, &length, output.count) == 1, length == output.count else {
            throw libraryError("HMAC-SHA-256 failed")
        }
        return output
    }

    /// Appends AES-128-GCM(key, nonce, no AAD) of `plaintext ‖ delimiter` and the 16-byte tag to
    /// `output`, writing in place: the body is allocated once, by the caller.
    func sealRecord(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], delimiter: UInt8, appendingTo output: inout [UInt8]) throws(WebPushError) {
        precondition(key.count == 16 && nonce.count == 12, "AES-128-GCM takes a 16-byte key and a 12-byte nonce")
        let start = output.count
        let tagLength = 16
        output.append(contentsOf: repeatElement(0, count: plaintext.count + 1 + tagLength))
        let sealed = output.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard EVP_EncryptInit_ex2(cipherContext, nil, key, nonce, nil) == 1 else { return false }
            var cursor = buffer.baseAddress! + start
            var written: Int32 = 0
            if !plaintext.isEmpty {
                guard EVP_EncryptUpdate(cipherContext, cursor, &written, plaintext, Int32(plaintext.count)) == 1,
                      written == Int32(plaintext.count) else { return false }
                cursor += plaintext.count
            }
            var last = delimiter
            guard EVP_EncryptUpdate(cipherContext, cursor, &written, &last, 1) == 1, written == 1 else { return false }
            cursor += 1
            // GCM has nothing held back: Final writes no bytes, then the tag can be read.
            guard EVP_EncryptFinal_ex(cipherContext, cursor, &written) == 1, written == 0 else { return false }
            return EVP_CIPHER_CTX_ctrl(cipherContext, EVP_CTRL_GCM_GET_TAG, Int32(tagLength), cursor) == 1
        }
        guard sealed else {
            output.removeLast(plaintext.count + 1 + tagLength)
            throw libraryError("AES-128-GCM encryption failed")
        }
    }

    /// Bytes from OpenSSL's CSPRNG (salts).
    static func randomBytes(count: Int) throws(WebPushError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else { throw libraryError("the random generator failed") }
        return bytes
    }
}

/// OSSL_PARAM names and values as static C strings: OSSL_PARAM_construct_* and
/// OSSL_PARAM_BLD_push_* keep the name's pointer, and a Swift String passed to C lives only for the
/// call. The names are OpenSSL's (core_names.h: OSSL_PKEY_PARAM_GROUP_NAME, …_PUB_KEY, …_PRIV_KEY,
/// OSSL_MAC_PARAM_DIGEST).
private enum ParamName {
    static let groupName: StaticString = "group"
    static let publicKey: StaticString = "pub"
    static let privateKey: StaticString = "priv"
    static let digest: StaticString = "digest"
    static let prime256v1: StaticString = "prime256v1"
    static let sha256: StaticString = "SHA256"
}

extension StaticString {
    /// String literals are stored NUL-terminated for the program's lifetime.
    fileprivate var cString: UnsafePointer<CChar> {
        UnsafeRawPointer(utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// For OSSL_PARAM_construct_utf8_string, whose value is `char *`; OpenSSL only reads it here.
    fileprivate var mutableCString: UnsafeMutablePointer<CChar> {
        UnsafeMutablePointer(mutating: cString)
    }
}

/// An error for a failure valid input should not cause; OpenSSL's queue is emptied into it so a
/// later, unrelated call does not report this one's reasons.
private func libraryError(_ what: String, fileID: String = #fileID, line: Int = #line) -> WebPushError {
    var reasons: [String] = []
    var code = ERR_get_error()
    while code != 0 {
        var text = [CChar](repeating: 0, count: 200)
        ERR_error_string_n(code, &text, text.count)
        reasons.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        code = ERR_get_error()
    }
    let detail = reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"
    return WebPushError(.library, what + detail, fileID: fileID, line: line)
}
