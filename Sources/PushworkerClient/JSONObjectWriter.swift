import PushCore

/// Writes one JSON object member by member, in the order the builders give (the documented
/// order of a job and of `aps`), so the bytes read like the README's examples. Values given as
/// `JSONValue` write their own objects with sorted keys: the same job always gives the same bytes.
struct JSONObjectWriter {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var isEmpty = true

    init() {}

    mutating func member(_ key: String, _ value: JSONValue) {
        appendKey(key)
        Self.append(value, to: &bytes)
    }

    mutating func member(_ key: String, _ value: String) {
        appendKey(key)
        Self.appendString(value, to: &bytes)
    }

    mutating func member(_ key: String, _ value: Int) {
        appendKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func member(_ key: String, _ value: Double) {
        appendKey(key)
        Self.appendDouble(value, to: &bytes)
    }

    mutating func member(_ key: String, _ value: Bool) {
        appendKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func member(_ key: String, strings: [String]) {
        member(key, .array(strings.map(JSONValue.string)))
    }

    mutating func member(_ key: String, object: JSONObjectWriter) {
        appendKey(key)
        bytes.append(contentsOf: object.finished())
    }

    /// The members of `object` in key order.
    mutating func members(_ object: [String: JSONValue]) {
        for key in object.keys.sorted() { member(key, object[key] ?? .null) }
    }

    func finished() -> [UInt8] {
        bytes + [UInt8(ascii: "}")]
    }

    private mutating func appendKey(_ key: String) {
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .double(let number): appendDouble(number, to: &bytes)
        case .string(let text): appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            var object = JSONObjectWriter()
            object.members(members)
            bytes.append(contentsOf: object.finished())
        }
    }

    /// JSON has no NaN or infinity: they are written as null rather than as invalid JSON.
    static func appendDouble(_ value: Double, to bytes: inout [UInt8]) {
        guard value.isFinite else { return bytes.append(contentsOf: "null".utf8) }
        // Swift's shortest round-trip spelling ("0.5", "1e-07") is valid JSON.
        bytes.append(contentsOf: String(value).utf8)
    }

    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        JSONWriter.appendString(text, to: &bytes)
    }
}
