/// Base64 and base64url (RFC 4648) without Foundation, so the pure modules stay light.
///
/// Index loops over arrays with table lookups: a Web Push job encodes and decodes two keys per
/// subscription, and the iterator-and-append form this replaced showed in a Web Push message's
/// CPU (measured: docs/evidence/code-measurements.md#base64).
public enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// The 6-bit value of each byte in either alphabet; `invalid` (top bits set) for the rest.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, byte) in standard.enumerated() { table[Int(byte)] = UInt8(value) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()
    private static let invalid: UInt8 = 0xFF

    public static func encode<Bytes: Collection>(_ bytes: Bytes, urlSafe: Bool = false, padded: Bool = true) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        let table = urlSafe ? url : standard
        let whole = input.count / 3, tail = input.count % 3
        let length = whole * 4 + (tail == 0 ? 0 : (padded ? 4 : tail + 1))
        var out = [UInt8](repeating: UInt8(ascii: "="), count: length)
        var read = 0, written = 0
        for _ in 0..<whole {
            let triple = Int(input[read]) << 16 | Int(input[read + 1]) << 8 | Int(input[read + 2])
            out[written] = table[triple >> 18]
            out[written + 1] = table[triple >> 12 & 0x3F]
            out[written + 2] = table[triple >> 6 & 0x3F]
            out[written + 3] = table[triple & 0x3F]
            read += 3
            written += 4
        }
        if tail > 0 {
            let b0 = Int(input[read]), b1 = tail == 2 ? Int(input[read + 1]) : 0
            out[written] = table[b0 >> 2]
            out[written + 1] = table[(b0 & 0x03) << 4 | b1 >> 4]
            if tail == 2 { out[written + 2] = table[(b1 & 0x0F) << 2] }
            // The rest, when padded, is already '='.
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Accepts both alphabets, with or without padding; nil for anything else, including a last
    /// character whose bits after the last byte are not zero.
    public static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        // Padding may only end the text (how much of it is not checked): decode what precedes it.
        var end = input.count
        while end > 0, input[end - 1] == UInt8(ascii: "=") { end -= 1 }
        let tail = end % 4
        // One leftover character carries 6 bits, not a byte.
        guard tail != 1 else { return nil }
        let values = values
        var out = [UInt8](repeating: 0, count: end / 4 * 3 + (tail == 0 ? 0 : tail - 1))
        var read = 0, written = 0
        while read + 4 <= end {
            let a = values[Int(input[read])], b = values[Int(input[read + 1])]
            let c = values[Int(input[read + 2])], d = values[Int(input[read + 3])]
            // Every value is 6 bits; `invalid` has the top bits set ('=' inside is invalid too).
            guard (a | b | c | d) & 0xC0 == 0 else { return nil }
            let quad = Int(a) << 18 | Int(b) << 12 | Int(c) << 6 | Int(d)
            out[written] = UInt8(truncatingIfNeeded: quad >> 16)
            out[written + 1] = UInt8(truncatingIfNeeded: quad >> 8)
            out[written + 2] = UInt8(truncatingIfNeeded: quad)
            read += 4
            written += 3
        }
        if tail > 0 {
            let a = values[Int(input[read])], b = values[Int(input[read + 1])]
            let c = tail == 3 ? values[Int(input[read + 2])] : 0
            // The bits after the last byte must be zero: otherwise another spelling of the same
            // bytes would be accepted, one that no encoder writes.
            guard (a | b | c) & 0xC0 == 0, (tail == 3 ? c & 0x03 : b & 0x0F) == 0 else { return nil }
            out[written] = a << 2 | b >> 4
            if tail == 3 { out[written + 1] = (b & 0x0F) << 4 | c >> 2 }
        }
        return out
    }
}
