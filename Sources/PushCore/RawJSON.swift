/// The payload is forwarded to APNs exactly as the publisher wrote it (key order, number
/// spelling), only with insignificant white space removed, instead of being re-serialised
/// through a dictionary.
enum RawJSON {
    /// `slice` must be one valid JSON value (JSONParser checked it).
    static func compact(_ slice: ArraySlice<UInt8>) -> [UInt8] {
        // Already compact is the common case (publishers' JSON libraries): one copy, no scan state.
        guard slice.contains(where: isSpace) else { return Array(slice) }
        var out = [UInt8]()
        out.reserveCapacity(slice.count)
        var inString = false
        var escaped = false
        for byte in slice {
            if inString {
                out.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                out.append(byte)
            } else if !isSpace(byte) {
                out.append(byte)
            }
        }
        return out
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d
    }
}
