/// The lowercase `8-4-4-4-12` text of a UUID given as two 64-bit halves (version and variant bits
/// already set), written straight into the String's storage: one allocation, as ids are made per
/// job and per request.
public enum UUIDText {
    public static func format(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { text in
            // Each group from its last digit back, the dashes at fixed places: far fewer
            // instructions than a loop that asked at every digit which word and whether a dash
            // came next (measured: docs/evidence/code-measurements.md#request-ids).
            writeHex(high >> 32, digits: 8, into: text, at: 0)
            text[8] = UInt8(ascii: "-")
            writeHex(high >> 16, digits: 4, into: text, at: 9)
            text[13] = UInt8(ascii: "-")
            writeHex(high, digits: 4, into: text, at: 14)
            text[18] = UInt8(ascii: "-")
            writeHex(low >> 48, digits: 4, into: text, at: 19)
            text[23] = UInt8(ascii: "-")
            writeHex(low, digits: 12, into: text, at: 24)
            return 36
        }
    }

    /// The low `digits` hex digits of `value`, lowercase.
    private static func writeHex(_ value: UInt64, digits: Int, into text: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var rest = value
        var position = start + digits
        while position > start {
            position -= 1
            let nibble = UInt8(truncatingIfNeeded: rest) & 0xF
            text[position] = nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &- 10 &+ nibble
            rest >>= 4
        }
    }
}
