/// Byte-level access to an already validated JSON object: the payload is forwarded to APNs exactly
/// as the publisher wrote it (key order, number spelling), only with insignificant white space
/// removed, instead of being re-serialised through a dictionary.
enum RawJSON {
    /// The compacted bytes of the top-level member `key` (the last one, if repeated).
    static func member(_ key: String, in json: [UInt8]) -> [UInt8]? {
        var index = 0
        skipSpace(json, &index)
        guard index < json.count, json[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var found: Range<Int>?
        while index < json.count {
            skipSpace(json, &index)
            if json[index] == UInt8(ascii: "}") { break }
            if json[index] == UInt8(ascii: ",") { index += 1; continue }
            let keyStart = index
            skipString(json, &index)
            let name = decodeKey(json[keyStart..<index])
            skipSpace(json, &index)
            index += 1   // ':'
            skipSpace(json, &index)
            let valueStart = index
            skipValue(json, &index)
            if name == key { found = valueStart..<index }
        }
        return found.map { compact(json[$0]) }
    }

    private static func skipSpace(_ json: [UInt8], _ index: inout Int) {
        while index < json.count, [0x20, 0x09, 0x0a, 0x0d].contains(json[index]) { index += 1 }
    }

    private static func skipString(_ json: [UInt8], _ index: inout Int) {
        index += 1   // opening quote
        while index < json.count {
            switch json[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): index += 1; return
            default: index += 1
            }
        }
    }

    private static func skipValue(_ json: [UInt8], _ index: inout Int) {
        guard index < json.count else { return }
        switch json[index] {
        case UInt8(ascii: "\""):
            skipString(json, &index)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < json.count {
                switch json[index] {
                case UInt8(ascii: "\""): skipString(json, &index); continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { index += 1; return }
                default: break
                }
                index += 1
            }
        default:
            while index < json.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0a, 0x0d].contains(json[index]) {
                index += 1
            }
        }
    }

    private static func decodeKey(_ quoted: ArraySlice<UInt8>) -> String {
        let inner = quoted.dropFirst().dropLast()
        guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
        // Rare: an escaped key. Let JSONValue (Foundation) unescape it.
        if case let .string(text)? = try? JSONValue.parse(Array(quoted)) { return text }
        return String(decoding: inner, as: UTF8.self)
    }

    private static func compact(_ slice: ArraySlice<UInt8>) -> [UInt8] {
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
            } else if ![0x20, 0x09, 0x0a, 0x0d].contains(byte) {
                out.append(byte)
            }
        }
        return out
    }
}
