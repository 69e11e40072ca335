import Crypto
import Foundation

/// Decrypts a Web Push body (`Content-Encoding: aes128gcm`, RFC 8291 with RFC 8188's record format)
/// as the browser holding the subscription would. Written with swift-crypto, apart from the
/// worker's OpenSSL encryptor, so that each checks the other.
public struct WebPushMessageDecryptor: Sendable {
    /// The subscription's private key, kept as its raw scalar: swift-crypto's key is not Sendable.
    private let privateKeyBytes: Data
    private let authSecret: [UInt8]

    /// - Parameters:
    ///   - privateKey: the private half of the subscription's `p256dh`.
    ///   - authSecret: the subscription's 16-byte `auth`.
    public init(privateKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]) throws(WebPushDecryptionError) {
        guard authSecret.count == 16 else {
            throw WebPushDecryptionError(.invalidAuthSecret, "the auth secret must be 16 bytes, got \(authSecret.count)")
        }
        self.privateKeyBytes = privateKey.rawRepresentation
        self.authSecret = authSecret
    }

    /// The plaintext of `body`, without the delimiter and padding.
    public func decrypt(_ body: [UInt8]) throws(WebPushDecryptionError) -> [UInt8] {
        // RFC 8188 §2.1: salt (16) ‖ rs (uint32) ‖ idlen (1) ‖ keyid (idlen).
        guard body.count >= 21 else {
            throw WebPushDecryptionError(.malformedHeader, "\(body.count) bytes is shorter than the 21-byte header start")
        }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let keyIDLength = Int(body[20])
        guard recordSize >= 18 else {
            throw WebPushDecryptionError(.malformedHeader, "record size \(recordSize) is below RFC 8188's minimum of 18")
        }
        // RFC 8291 §4: the key id is the sender's uncompressed P-256 public key.
        guard keyIDLength == 65 else {
            throw WebPushDecryptionError(.malformedHeader, "the key id is \(keyIDLength) bytes; Web Push puts the sender's 65-byte public key there")
        }
        guard body.count >= 21 + keyIDLength else {
            throw WebPushDecryptionError(.malformedHeader, "the body ends inside the key id")
        }
        let senderPublicKeyBytes = Array(body[21..<(21 + keyIDLength)])
        let record = body[(21 + keyIDLength)...]
        // RFC 8291 §4: one record. A record holds at least the delimiter and the 16-byte tag.
        guard record.count >= 17 else {
            throw WebPushDecryptionError(.malformedRecord, "the record is \(record.count) bytes, shorter than a delimiter and a tag")
        }
        guard record.count <= recordSize else {
            throw WebPushDecryptionError(.malformedRecord, "\(record.count) bytes of records exceed the record size \(recordSize): Web Push sends one record")
        }

        let senderPublicKey: P256.KeyAgreement.PublicKey
        do {
            senderPublicKey = try P256.KeyAgreement.PublicKey(x963Representation: senderPublicKeyBytes)
        } catch {
            throw WebPushDecryptionError(.invalidSenderKey, "the key id is not a P-256 public key")
        }
        let sharedSecret: SharedSecret
        let userAgentPublicKey: Data
        do {
            let privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKeyBytes)
            userAgentPublicKey = privateKey.publicKey.x963Representation
            sharedSecret = try privateKey.sharedSecretFromKeyAgreement(with: senderPublicKey)
        } catch {
            throw WebPushDecryptionError(.invalidSenderKey, "ECDH with the sender's key failed")
        }

        // RFC 8291 §3.3–3.4: auth secret and both public keys into the IKM, then RFC 8188 §2.2–2.3.
        let keyInfo = Data("WebPush: info".utf8) + [0x00] + userAgentPublicKey + senderPublicKeyBytes
        let inputKeyingMaterial = sharedSecret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        let pseudoRandomKey = HKDF<SHA256>.extract(inputKeyMaterial: inputKeyingMaterial, salt: salt)
        let contentKey = HKDF<SHA256>.expand(pseudoRandomKey: pseudoRandomKey, info: Data("Content-Encoding: aes128gcm".utf8) + [0x00], outputByteCount: 16)
        let nonceBytes = HKDF<SHA256>.expand(pseudoRandomKey: pseudoRandomKey, info: Data("Content-Encoding: nonce".utf8) + [0x00], outputByteCount: 12)
            .withUnsafeBytes { Data($0) }

        let padded: Data
        do {
            // Record 0: the nonce XOR 0 is the nonce (RFC 8188 §2.3).
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonceBytes), ciphertext: record.dropLast(16), tag: record.suffix(16))
            padded = try AES.GCM.open(box, using: contentKey)
        } catch {
            throw WebPushDecryptionError(.authenticationFailed, "AES-GCM authentication failed: the body was altered or is for another subscription")
        }

        // RFC 8188 §2: data ‖ delimiter ‖ zero padding; the last record's delimiter is 0x02.
        guard let delimiterIndex = padded.lastIndex(where: { $0 != 0 }) else {
            throw WebPushDecryptionError(.malformedPadding, "the record has no delimiter, only zeros")
        }
        switch padded[delimiterIndex] {
        case 0x02:
            return Array(padded[padded.startIndex..<delimiterIndex])
        case 0x01:
            throw WebPushDecryptionError(.malformedPadding, "the record's delimiter is 0x01 (more records follow), but the body has no more")
        default:
            throw WebPushDecryptionError(.malformedPadding, "the record ends in 0x\(String(padded[delimiterIndex], radix: 16)), not a delimiter followed by zeros")
        }
    }
}

/// Why a Web Push body could not be decrypted.
public struct WebPushDecryptionError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        public static let invalidAuthSecret = Code("invalidAuthSecret")
        /// The 86-byte header is short, or its record size or key id length is wrong.
        public static let malformedHeader = Code("malformedHeader")
        /// The record is too short, or there is more than one.
        public static let malformedRecord = Code("malformedRecord")
        /// The key id is not a usable P-256 public key.
        public static let invalidSenderKey = Code("invalidSenderKey")
        /// AES-GCM refused the record: altered, truncated, or for another key.
        public static let authenticationFailed = Code("authenticationFailed")
        /// The decrypted record does not end in 0x02 and zeros.
        public static let malformedPadding = Code("malformedPadding")
    }

    public let code: Code
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Web Push decryption \(code): \(message)" }
}
