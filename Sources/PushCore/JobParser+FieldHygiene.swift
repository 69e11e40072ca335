/// What a publisher's text may put into a rejection: field values that go into HTTP/2 headers, AMQP
/// properties and Redis keys hold no control characters, and no rejection grows with its input.
extension JobParser {
    /// Unknown member names longer than this are shown cut to it (with "…" and their length).
    public static let maxShownNameBytes = 64
    /// Bad values are quoted up to this many bytes.
    static let maxQuotedBytes = 40

    /// Rejects U+0000–U+001F and U+007F, naming the first one and its byte offset (from 0).
    public static func rejectControlCharacters(in text: String, field: @autoclosure () -> String) throws(JobRejection) {
        // Control characters are ASCII; every byte of a multi-byte UTF-8 sequence is ≥ 0x80.
        let utf8 = text.utf8.span   // the string's storage: no String index step per byte
        for offset in utf8.indices where isControl(utf8[offset]) {
            throw JobRejection(field: field(), "contains a control character (0x\(hexByte(utf8[offset]))) at byte \(offset)")
        }
    }

    /// Read but not listed as known: the worker's own bookkeeping, which no publisher writes (and
    /// which would take the rejection past its bound of 300 bytes).
    static let unlistedFields: Set<String> = ["outage_waits"]

    func unknownField(_ key: String) -> JobRejection {
        let names = fieldOrder.names.filter { !Self.unlistedFields.contains($0) }.sorted()
        let known = "known: \(names.joined(separator: ", ")); prefix your own fields with x-"
        let size = key.utf8.count
        let name = Self.shown(key, maxBytes: Self.maxShownNameBytes)
        guard size > Self.maxShownNameBytes else { return JobRejection(field: name, "unknown field (\(known))") }
        return JobRejection(field: name, "unknown field (its name is \(size) bytes, shown cut to \(Self.maxShownNameBytes); \(known))")
    }

    /// A value for an error message; strings are quoted and cut like `shown`.
    public static func rendered(_ value: JSONValue) -> String {
        guard case let .string(text) = value else { return value.rendered }
        return "\"\(shown(text, maxBytes: maxQuotedBytes))\""
    }

    /// `text` with control characters escaped as in JSON (`\u000A`), cut at a scalar boundary to at
    /// most `maxBytes` bytes plus "…". Reads no further than it writes, whatever the input's size.
    static func shown(_ text: String, maxBytes: Int) -> String {
        var result = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let escaped = scalar.isASCII && isControl(UInt8(scalar.value))
            let size = escaped ? 6 : UTF8.width(scalar)
            guard used + size <= maxBytes else { return result + "…" }
            if escaped { result += "\\u00\(hexByte(UInt8(scalar.value)))" } else { result.unicodeScalars.append(scalar) }
            used += size
        }
        return result
    }

    private static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

/// A group name compared by its bytes: Swift's `==` takes NFC and NFD spellings as equal, Redis keys do not.
struct GroupName: Hashable {
    let name: String

    init(_ name: String) { self.name = name }

    static func == (lhs: GroupName, rhs: GroupName) -> Bool { lhs.name.utf8.elementsEqual(rhs.name.utf8) }

    func hash(into hasher: inout Hasher) {
        var name = self.name
        name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
