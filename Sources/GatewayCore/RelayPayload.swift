import PushCore

/// The APNs payload of a relayed message, as toot-relay's README describes it:
/// `{"aps":{"alert":"🎺","mutable-content":1,"content-available":1},"p":…,"k":…,"s":…,"x":…}`,
/// plus `"e":"aes128gcm"` for aes128gcm messages. `mutable-content` wakes the app's Notification
/// Service Extension, which decrypts `p` and replaces the alert. The members are written in that
/// order, compactly, the emoji as its 4 UTF-8 bytes; nothing in them needs JSON escaping (the Z85
/// alphabet has no `"` or `\`, and `RelayPath` refuses them in the extra part), so `size` is exact.
enum RelayPayload {
    private static let aps = Array(#"{"alert":"🎺","mutable-content":1,"content-available":1}"#.utf8)

    /// `{"aps":…}` (65 bytes), `,"p":""` (7), `,"k":"<82>"` (89), `,"s":"<20>"` (27) and `}` (1).
    static let fixedBytes = 189
    /// `,"x":""` around the extra part.
    static let extraMemberOverhead = 7
    /// `,"e":"aes128gcm"`.
    static let encodingMemberBytes = 16

    /// The payload's serialised size, without building it.
    static func size(bodyBytes: Int, extraBytes: Int?, encoding: RelayEncryption.Encoding) -> Int {
        fixedBytes + ExtendedZ85.encodedLength(of: bodyBytes)
            + (extraBytes.map { extraMemberOverhead + $0 } ?? 0)
            + (encoding == .aes128gcm ? encodingMemberBytes : 0)
    }

    static func bytes(body: [UInt8], encryption: RelayEncryption, extra: String?) -> [UInt8] {
        var writer = JSONWriter(capacity: size(bodyBytes: body.count, extraBytes: extra?.utf8.count, encoding: encryption.encoding))
        writer.field("aps", rawJSON: aps)
        writer.field("p", ExtendedZ85.encode(body))
        writer.field("k", ExtendedZ85.encode(encryption.senderPublicKey))
        writer.field("s", ExtendedZ85.encode(encryption.salt))
        if let extra { writer.field("x", extra) }
        if encryption.encoding == .aes128gcm { writer.field("e", RelayEncryption.Encoding.aes128gcm.rawValue) }
        return writer.finish()
    }
}
