extension JSONValue {
    /// The value as compact JSON. Object members are written in key order, so that the same value
    /// always gives the same bytes (a retried job's payload, a test's expected shape).
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    public func append(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case let .bool(flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case let .int(number): bytes.append(contentsOf: String(number).utf8)
        // The parser makes no infinity or NaN: every Double here has a JSON spelling.
        case let .double(number): bytes.append(contentsOf: "\(number)".utf8)
        case let .string(text): JSONWriter.appendString(text, to: &bytes)
        case let .array(elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.append(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case let .object(members):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                members[key]!.append(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}
