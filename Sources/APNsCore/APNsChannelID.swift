/// A Live Activity broadcast channel's id as APNs writes them (Apple, "Sending channel management
/// requests to APNs": the `apns-channel-id` header): base64, standard alphabet, padded. Checked
/// wherever one arrives (a job, a command line, an answer, Redis) before it goes into a header.
public enum APNsChannelID {
    /// Far above the 24 characters of Apple's 16-byte ids: the size is not documented as fixed.
    public static let maxLength = 256
    /// A broadcast's payload may be larger than a device push's (Apple: 5 KB).
    public static let maxBroadcastPayloadBytes = 5120

    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maxLength, bytes.count % 4 == 0 else { return false }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return false }
        return bytes.dropLast(padding).allSatisfy { byte in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
        }
    }
}
