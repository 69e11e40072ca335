/// The parameter lists of the aesgcm `Encryption` and `Crypto-Key` headers
/// (draft-ietf-webpush-encryption-04 with draft-ietf-httpbis-encryption-encoding-03 §3 and §4):
/// comma-separated entries of `;`-separated `name=value` parameters, a value a token or a quoted
/// string (`salt="…"`). Names compare case-insensitively; a parameter without `=` is skipped.
struct HeaderParameters {
    /// Each entry's parameters in order, names lowercased.
    let entries: [[(name: String, value: String)]]

    init(_ header: String) {
        var entries: [[(name: String, value: String)]] = []
        var entry: [(name: String, value: String)] = []
        var name = [UInt8]()
        var value = [UInt8]()
        var inValue = false
        var inQuotes = false
        var escaped = false

        func endParameter() {
            let key = String(decoding: Self.trimmed(name), as: UTF8.self).lowercased()
            if inValue, !key.isEmpty { entry.append((key, String(decoding: Self.trimmed(value), as: UTF8.self))) }
            name.removeAll(keepingCapacity: true)
            value.removeAll(keepingCapacity: true)
            inValue = false
        }

        for byte in header.utf8 {
            if inQuotes {
                if escaped {
                    value.append(byte)
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                } else {
                    value.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\"") where inValue:
                inQuotes = true
            case UInt8(ascii: ";"):
                endParameter()
            case UInt8(ascii: ","):
                endParameter()
                entries.append(entry)
                entry = []
            case UInt8(ascii: "=") where !inValue:
                inValue = true
            default:
                if inValue { value.append(byte) } else { name.append(byte) }
            }
        }
        endParameter()
        entries.append(entry)
        self.entries = entries
    }

    /// The value of `name` in `entry`, the first if repeated.
    static func value(_ name: String, in entry: [(name: String, value: String)]) -> String? {
        entry.first { $0.name == name }?.value
    }

    private static func trimmed(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return bytes[first...last]
    }
}
