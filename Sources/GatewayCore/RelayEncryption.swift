import PushCore

/// What the client needs besides the ciphertext to decrypt a relayed message: the sender's
/// public key (`k`) and the salt (`s`), read from the aesgcm headers or the aes128gcm body.
struct RelayEncryption: Hashable {
    enum Encoding: String {
        /// draft-ietf-webpush-encryption-04: salt and key in the `Encryption` and `Crypto-Key` headers.
        case aesgcm
        /// RFC 8188 and RFC 8291: salt and key in the body's header.
        case aes128gcm
    }

    static let saltBytes = 16
    /// An uncompressed P-256 point (SEC 1 §2.3.3): 0x04, then x and y of 32 bytes each.
    static let publicKeyBytes = 65
    /// RFC 8188 §2: salt (16) ‖ rs (4) ‖ idlen (1), then the keyid.
    static let aes128gcmFixedHeaderBytes = 21
    /// RFC 8188 §2: a record size below 18 leaves no room for the 16-byte tag, a delimiter and content.
    static let minRecordSize: UInt32 = 18
    /// RFC 8188 §2: the last record holds at least the 16-byte tag and the padding delimiter.
    static let minRecordBytes = 17

    let encoding: Encoding
    let senderPublicKey: [UInt8]
    let salt: [UInt8]

    /// aesgcm: `Encryption: salt=<base64url>` and `Crypto-Key: dh=<base64url>`. Of several
    /// comma-separated entries, the first with a salt counts, and the first `dh` entry with the
    /// same `keyid` (or any, when either has none).
    init(aesgcmHeader header: (String) -> String?) throws(RelayRefusal) {
        guard let encryption = header("Encryption") else {
            throw .badRequest("header Encryption is missing: Content-Encoding aesgcm needs Encryption: salt=<base64url> (draft-ietf-webpush-encryption-04)")
        }
        let saltEntry = HeaderParameters(encryption).entries.first { HeaderParameters.value("salt", in: $0) != nil }
        guard let saltEntry, let saltText = HeaderParameters.value("salt", in: saltEntry) else {
            throw .badRequest("header Encryption: has no salt parameter (expected salt=<base64url>)")
        }
        guard let salt = Base64.decode(saltText) else {
            throw .badRequest("header Encryption: parameter salt is not base64url")
        }
        guard salt.count == Self.saltBytes else {
            throw .badRequest("header Encryption: parameter salt is \(salt.count) bytes; aesgcm needs a \(Self.saltBytes)-byte salt")
        }

        guard let cryptoKey = header("Crypto-Key") else {
            throw .badRequest("header Crypto-Key is missing: Content-Encoding aesgcm needs Crypto-Key: dh=<base64url> (draft-ietf-webpush-encryption-04)")
        }
        let keyID = HeaderParameters.value("keyid", in: saltEntry)
        let keyEntry = HeaderParameters(cryptoKey).entries.first { entry in
            guard HeaderParameters.value("dh", in: entry) != nil else { return false }
            guard let keyID, let entryKeyID = HeaderParameters.value("keyid", in: entry) else { return true }
            return entryKeyID == keyID
        }
        guard let keyEntry, let keyText = HeaderParameters.value("dh", in: keyEntry) else {
            throw .badRequest("header Crypto-Key: has no dh parameter (expected dh=<base64url>)")
        }
        guard let key = Base64.decode(keyText) else {
            throw .badRequest("header Crypto-Key: parameter dh is not base64url")
        }
        guard Self.isPublicKey(key) else {
            throw .badRequest("header Crypto-Key: parameter dh is \(key.count) bytes\(key.first.map { ", first byte 0x\(String($0, radix: 16))" } ?? ""); it must be the sender's \(Self.publicKeyBytes)-byte uncompressed P-256 public key (first byte 0x04)")
        }
        self.encoding = .aesgcm
        self.senderPublicKey = key
        self.salt = salt
    }

    /// aes128gcm: the header at the start of the body (RFC 8188 §2), whose keyid is the sender's
    /// public key (RFC 8291 §4).
    init(aes128gcmBody body: [UInt8]) throws(RelayRefusal) {
        let fixed = Self.aes128gcmFixedHeaderBytes
        guard body.count >= fixed else {
            throw .badRequest("body: \(body.count) bytes is too short for the aes128gcm header (salt 16, rs 4, idlen 1, keyid; RFC 8188 §2)")
        }
        let recordSize = body[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard recordSize >= Self.minRecordSize else {
            throw .badRequest("body: the aes128gcm header's record size rs is \(recordSize); RFC 8188 requires at least \(Self.minRecordSize)")
        }
        let idLength = Int(body[20])
        guard idLength == Self.publicKeyBytes else {
            throw .badRequest("body: the aes128gcm header's idlen is \(idLength); RFC 8291 needs the sender's \(Self.publicKeyBytes)-byte public key as keyid")
        }
        let headerBytes = fixed + idLength
        guard body.count >= headerBytes + Self.minRecordBytes else {
            throw .badRequest("body: \(body.count) bytes is too short: the aes128gcm header takes \(headerBytes) and a record at least \(Self.minRecordBytes) more (RFC 8188 §2)")
        }
        let key = Array(body[fixed..<headerBytes])
        guard Self.isPublicKey(key) else {
            throw .badRequest("body: the aes128gcm header's keyid starts with 0x\(String(key[0], radix: 16)); it must be the sender's uncompressed P-256 public key (first byte 0x04)")
        }
        self.encoding = .aes128gcm
        self.senderPublicKey = key
        self.salt = Array(body[0..<16])
    }

    private static func isPublicKey(_ key: [UInt8]) -> Bool {
        key.count == publicKeyBytes && key[0] == 0x04
    }
}
