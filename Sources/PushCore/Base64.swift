/// Base64 and base64url (RFC 4648) without Foundation, so the pure modules stay light.
///
/// Written over contiguous bytes with table lookups: a Web Push job encodes and decodes two keys
/// per subscription, and the iterator-and-append form this replaced was 3% of the worker's CPU per
/// Web Push message (perf, `ops/bench-platforms --profile webpush`).
public enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// The 6-bit value of each byte in either alphabet; `invalid` for the rest, `padding` for '='.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, byte) in standard.enumerated() { table[Int(byte)] = UInt8(value) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()
    private static let invalid: UInt8 = 0xFF
    private static let padding: UInt8 = 0xFE

    public static func encode<Bytes: Collection>(_ bytes: Bytes, urlSafe: Bool = false, padded: Bool = true) -> String where Bytes.Element == UInt8 {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode($0, urlSafe: urlSafe, padded: padded) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode($0, urlSafe: urlSafe, padded: padded) }
    }

    private static func encode(_ bytes: UnsafeBufferPointer<UInt8>, urlSafe: Bool, padded: Bool) -> String {
        let whole = bytes.count / 3, tail = bytes.count % 3
        let length = whole * 4 + (tail == 0 ? 0 : (padded ? 4 : tail + 1))
        guard length > 0 else { return "" }
        return (urlSafe ? url : standard).withUnsafeBufferPointer { table in
            String(unsafeUninitializedCapacity: length) { out in
                var read = 0, written = 0
                for _ in 0..<whole {
                    let triple = UInt32(bytes[read]) << 16 | UInt32(bytes[read + 1]) << 8 | UInt32(bytes[read + 2])
                    out[written] = table[Int(triple >> 18)]
                    out[written + 1] = table[Int(triple >> 12 & 0x3F)]
                    out[written + 2] = table[Int(triple >> 6 & 0x3F)]
                    out[written + 3] = table[Int(triple & 0x3F)]
                    read += 3
                    written += 4
                }
                if tail > 0 {
                    let b0 = bytes[read], b1: UInt8 = tail == 2 ? bytes[read + 1] : 0
                    out[written] = table[Int(b0 >> 2)]
                    out[written + 1] = table[Int((b0 & 0x03) << 4 | b1 >> 4)]
                    written += 2
                    if tail == 2 {
                        out[written] = table[Int((b1 & 0x0F) << 2)]
                        written += 1
                    }
                    if padded {
                        while written < length { out[written] = UInt8(ascii: "="); written += 1 }
                    }
                }
                return length
            }
        }
    }

    /// Accepts both alphabets, with or without padding; nil for anything else, including a last
    /// character whose bits after the last byte are not zero.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0) }
    }

    /// `decode(_:)` over the text's UTF-8 bytes.
    public static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        // Padding may only end the text (how much of it is not checked): decode what precedes it.
        var end = text.count
        while end > 0, text[end - 1] == UInt8(ascii: "=") { end -= 1 }
        let tail = end % 4
        // One leftover character carries 6 bits, not a byte.
        guard tail != 1 else { return nil }
        let length = end / 4 * 3 + (tail == 0 ? 0 : tail - 1)
        return values.withUnsafeBufferPointer { values -> [UInt8]? in
            var valid = true
            let decoded = [UInt8](unsafeUninitializedCapacity: length) { out, count in
                var read = 0, written = 0
                while read + 4 <= end {
                    let a = values[Int(text[read])], b = values[Int(text[read + 1])]
                    let c = values[Int(text[read + 2])], d = values[Int(text[read + 3])]
                    // Every value is 6 bits; `invalid` and `padding` have the top bits set.
                    guard (a | b | c | d) & 0xC0 == 0 else { valid = false; break }
                    let quad = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[written] = UInt8(truncatingIfNeeded: quad >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: quad >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: quad)
                    read += 4
                    written += 3
                }
                if valid, tail > 0 {
                    let a = values[Int(text[read])], b = values[Int(text[read + 1])]
                    let c = tail == 3 ? values[Int(text[read + 2])] : 0
                    // The bits after the last byte must be zero: otherwise another spelling of the
                    // same bytes would be accepted, one that no encoder writes.
                    let spare = tail == 3 ? c & 0x03 : b & 0x0F
                    if (a | b | c) & 0xC0 != 0 || spare != 0 {
                        valid = false
                    } else {
                        out[written] = a << 2 | b >> 4
                        written += 1
                        if tail == 3 {
                            out[written] = (b & 0x0F) << 4 | c >> 2
                            written += 1
                        }
                    }
                }
                count = valid ? written : 0
            }
            return valid ? decoded : nil
        }
    }
}
