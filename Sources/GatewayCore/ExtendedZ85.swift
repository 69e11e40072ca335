/// Z85 (ZeroMQ RFC 32/Z85) extended to any length, as toot-relay's README describes it for the
/// `p`, `k` and `s` members of its payloads: every 4 bytes are read as a big-endian 32-bit integer
/// and written as 5 base-85 digits, most significant first (RFC 32); a trailing 1–3 bytes are read
/// as an 8-, 16- or 24-bit big-endian integer and written as 2–4 digits the same way. So n bytes
/// take `encodedLength(of: n)` characters, and a text of length 1 mod 5 is no encoding.
/// The alphabet has no `"` or `\`, so an encoding goes into JSON unescaped.
public enum ExtendedZ85 {
    static let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    /// Each character's digit value, 0xFF for characters outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (digit, character) in alphabet.enumerated() { table[Int(character)] = UInt8(digit) }
        return table
    }()

    /// The characters `byteCount` bytes encode to: 5 per 4 bytes, and one more than the bytes of a 1–3-byte tail.
    public static func encodedLength(of byteCount: Int) -> Int {
        let tail = byteCount % 4
        return byteCount / 4 * 5 + (tail == 0 ? 0 : tail + 1)
    }

    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(encodedLength(of: bytes.count))
        var value: UInt32 = 0
        var count = 0
        for byte in bytes {
            value = value << 8 | UInt32(byte)
            count += 1
            if count == 4 {
                appendDigits(of: value, count: 5, to: &out)
                value = 0
                count = 0
            }
        }
        if count > 0 { appendDigits(of: value, count: count + 1, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not an extended Z85 encoding: a character outside
    /// the alphabet, a length of 1 mod 5, or a group whose value does not fit its bytes (so every
    /// byte string has exactly one encoding).
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        let tail = characters.count % 5
        guard tail != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(characters.count / 5 * 4 + max(tail - 1, 0))
        var start = 0
        while start < characters.count {
            let digits = min(5, characters.count - start)
            var value: UInt64 = 0
            for character in characters[start..<(start + digits)] {
                let digit = values[Int(character)]
                guard digit != 0xFF else { return nil }
                value = value * 85 + UInt64(digit)
            }
            let byteCount = digits - 1
            guard value >> (8 * UInt64(byteCount)) == 0 else { return nil }
            for shift in stride(from: 8 * (byteCount - 1), through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
            start += digits
        }
        return out
    }

    private static func appendDigits(of value: UInt32, count: Int, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: count))
        var rest = value
        for index in stride(from: start + count - 1, through: start, by: -1) {
            out[index] = alphabet[Int(rest % 85)]
            rest /= 85
        }
    }
}
