/// The `aes128gcm` content coding as Web Push uses it (RFC 8188 §2, RFC 8291 §4): an 86-byte
/// header, then exactly one record holding the plaintext, the 0x02 delimiter and the GCM tag.
public enum WebPushRecordFormat {
    /// The record size written in the header. With one record any value above the record's length
    /// would do; 4096 is what browsers and libraries write and what RFC 8291 §4 suggests.
    public static let recordSize = 4096
    public static let saltLength = 16
    /// salt (16) ‖ rs (4, big-endian) ‖ idlen (1) ‖ keyid (the sender's 65-byte public key).
    public static let headerLength = saltLength + 4 + 1 + 65
    public static let tagLength = 16
    /// RFC 8188 §2: 0x02 ends the last record; padding (zeros) may follow it, and is never written here.
    static let lastRecordDelimiter: UInt8 = 0x02

    /// The longest plaintext a push service must accept (RFC 8291 §4): RFC 8030 §7.2 guarantees
    /// 4096 bytes of body, which hold the header, one delimiter byte and the tag as well
    /// (4096 − 86 − 1 − 16). The record size alone would allow more.
    public static let maximumPlaintextLength = 4096 - headerLength - 1 - tagLength

    /// Appends the header (RFC 8188 §2.1) to `body`.
    static func appendHeader(salt: [UInt8], senderPublicKey: [UInt8], to body: inout [UInt8]) {
        precondition(salt.count == saltLength && senderPublicKey.count == 65, "an aes128gcm header has a 16-byte salt and a 65-byte key")
        body.append(contentsOf: salt)
        let size = UInt32(recordSize)
        body.append(UInt8(truncatingIfNeeded: size >> 24))
        body.append(UInt8(truncatingIfNeeded: size >> 16))
        body.append(UInt8(truncatingIfNeeded: size >> 8))
        body.append(UInt8(truncatingIfNeeded: size))
        body.append(UInt8(senderPublicKey.count))
        body.append(contentsOf: senderPublicKey)
    }
}
