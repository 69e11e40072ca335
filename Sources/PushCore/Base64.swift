/// Base64 and base64url (RFC 4648) without Foundation, so the pure modules stay light.
public enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode<Bytes: Collection>(_ bytes: Bytes, urlSafe: Bool = false, padded: Bool = true) -> String where Bytes.Element == UInt8 {
        let table = urlSafe ? url : standard
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next(), b2 = iterator.next()
            out.append(table[Int(b0 >> 2)])
            out.append(table[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 { out.append(table[Int((b1 & 0x0f) << 2 | (b2 ?? 0) >> 6)]) } else if padded { out.append(UInt8(ascii: "=")) }
            if let b2 { out.append(table[Int(b2 & 0x3f)]) } else if padded { out.append(UInt8(ascii: "=")) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Accepts both alphabets, with or without padding; nil for anything else, including a last
    /// character whose bits after the last byte are not zero.
    public static func decode(_ text: String) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        var sawPadding = false
        for char in text.utf8 {
            let value: UInt8
            switch char {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = char - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = char - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = char - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "="): sawPadding = true; continue
            default: return nil
            }
            if sawPadding { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // Leftover bits must be the zero padding of a 2- or 3-char tail: otherwise another spelling
        // of the same bytes would be accepted, one that no encoder writes.
        if bits >= 6 || buffer & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }
}
