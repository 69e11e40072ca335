/// A strict RFC 8259 parser from bytes to `JSONValue`. Jobs are parsed once per delivery, so this
/// is on the hot path: Foundation's JSONDecoder with an enum that tries each type in turn cost a
/// thrown error per failed try and was a third of the worker's CPU on one-token jobs;
/// JSONSerialization on Linux turns `1` into `true`. Nesting is limited so a hostile message
/// cannot exhaust the stack.
public struct JSONParser {
    public static let maxDepth = 256

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    private let recordedMember: String?
    /// Where the outermost object's member `recordedMember` starts and ends in `bytes` (the last, if repeated).
    public private(set) var recordedRange: Range<Int>?
    /// Outermost members whose objects and arrays are checked but not built (they come back empty).
    private let checkedOnly: MemberSelection
    /// Set while reading a value that is checked only.
    private var discarding = false

    /// The outermost member whose shape `shape(ofMember:in:)` reports, and that shape (the last, if repeated).
    private var describedMember: String?
    private var describedShape: JSONShape?

    private enum MemberSelection {
        case none
        case named(String)
        case allBut(String)
        case all

        func contains(_ key: String) -> Bool {
            switch self {
            case .none: false
            case .named(let name): key == name
            case .allBut(let name): key != name
            case .all: true
            }
        }
    }

    /// - Parameter buildsRecordedMember: false to check the recorded member's objects and arrays
    ///   without building them (a job's payload is sent as bytes; see `PayloadObject`).
    public init(_ bytes: [UInt8], recordingRangeOf member: String? = nil, buildsRecordedMember: Bool = true) {
        self.bytes = bytes
        self.recordedMember = member
        if let member, !buildsRecordedMember { checkedOnly = .named(member) } else { checkedOnly = .none }
    }

    private init(_ bytes: [UInt8], onlyBuilding member: String) {
        self.bytes = bytes
        recordedMember = nil
        checkedOnly = .allBut(member)
    }

    private init(_ bytes: [UInt8], describing member: String) {
        self.bytes = bytes
        recordedMember = nil
        checkedOnly = .all
        describedMember = member
    }

    /// The shape of the outermost object's member `name` (the last, if repeated), or nil when
    /// absent or `bytes` is not an object. Nothing is built but the member names of that member,
    /// if it is an object: its values and every other member are only checked.
    public static func shape(ofMember name: String, in bytes: [UInt8]) throws(JSONSyntaxError) -> JSONShape? {
        var parser = JSONParser(bytes, describing: name)
        guard try parser.parseOutermostObject({ _, _ in }) else { return nil }
        return parser.describedShape
    }

    /// The value of the outermost object's member `name` (the last, if repeated, as a dictionary
    /// keeps), or nil when absent or `bytes` is not an object; the other members are checked, not built.
    public static func member(named name: String, of bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue? {
        var parser = JSONParser(bytes, onlyBuilding: name)
        var found: JSONValue?
        guard try parser.parseOutermostObject({ key, value in if key == name { found = value } }) else { return nil }
        return found
    }

    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes)
        return try parser.parseDocument()
    }

    /// Exactly one value, with only white space around it.
    public mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipSpace()
        let value = try parseValue()
        try expectEnd()
        return value
    }

    /// Reads `bytes` as one object, handing over its members; false (nothing read) when it is not an object.
    private mutating func parseOutermostObject(_ add: (String, JSONValue) -> Void) throws(JSONSyntaxError) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return false }
        try parseMembers(add)
        try expectEnd()
        return true
    }

    /// Only white space may follow the value.
    private mutating func expectEnd() throws(JSONSyntaxError) {
        skipSpace()
        guard index == bytes.count else { throw problem("unexpected \(describeByte(at: index)) after the JSON value") }
    }

    /// The outermost value, an object's members kept in order rather than in a dictionary: a job
    /// reads each of its dozen fields once, and hashing every key cost more than parsing them.
    public enum TopLevel {
        case members([(key: String, value: JSONValue)])
        case value(JSONValue)
    }

    public mutating func parseTopLevel() throws(JSONSyntaxError) -> TopLevel {
        var members = [(key: String, value: JSONValue)]()
        members.reserveCapacity(8)
        guard try parseOutermostObject({ members.append(($0, $1)) }) else { return .value(try parseDocument()) }
        return .members(members)
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw problem("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""):
            if discarding {
                try skipString()
                return .string("")
            }
            return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral(Self.trueBytes); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral(Self.falseBytes); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral(Self.nullBytes); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw problem("unexpected \(describeByte(at: index)), expected a value")
        }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        if discarding {
            try parseMembers { _, _ in }
            return .object([:])
        }
        var object = [String: JSONValue]()
        try parseMembers { object[$0] = $1 }
        return .object(object)
    }

    /// `index` is at `{`; leaves it after the matching `}`.
    private mutating func parseMembers(_ add: (String, JSONValue) -> Void) throws(JSONSyntaxError) {
        try enterContainer()
        let isTopLevel = depth == 1
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw problem("expected a member name in double quotes, found \(describeByte(at: index))")
            }
            let key = try parseString()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw problem("expected ':' after the member name \"\(key.prefix(40))\", found \(describeByte(at: index))")
            }
            index += 1
            skipSpace()
            let valueStart = index
            if isTopLevel, key == describedMember {
                var names: [String] = []
                discarding = true
                let value: JSONValue
                if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                    try parseMembers { name, _ in names.append(name) }
                    value = .object([:])
                } else {
                    value = try parseValue()
                }
                discarding = false
                describedShape = JSONShape(of: value, memberNames: names)
                add(key, value)
            } else if isTopLevel, checkedOnly.contains(key) {
                discarding = true
                add(key, try parseValue())
                discarding = false
            } else {
                add(key, try parseValue())
            }
            if isTopLevel, key == recordedMember { recordedRange = valueStart..<index }
            skipSpace()
            guard index < bytes.count else { throw problem("unexpected end of input inside an object") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return
            default:
                throw problem("expected ',' or '}' in an object, found \(describeByte(at: index))")
            }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        index += 1
        var array = [JSONValue]()
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(array)
        }
        while true {
            skipSpace()
            let element = try parseValue()
            if !discarding { array.append(element) }
            skipSpace()
            guard index < bytes.count else { throw problem("unexpected end of input inside an array") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(array)
            default:
                throw problem("expected ',' or ']' in an array, found \(describeByte(at: index))")
            }
        }
    }

    private mutating func enterContainer() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw problem("nested deeper than \(Self.maxDepth) levels") }
    }

    /// A string that is checked, not kept: plain ASCII is only scanned; anything else (escapes,
    /// other UTF-8) goes through `parseString` for its checks.
    private mutating func skipString() throws(JSONSyntaxError) {
        let start = index
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { break }
            index += 1
        }
        index = start
        _ = try parseString()
    }

    /// `index` is at the opening quote; leaves it after the closing one.
    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        let contentStart = index
        // Fast path: no escapes, which is every device token and nearly every key.
        var isASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = bytes[contentStart..<index]
                index += 1
                // ASCII needs no validation: String(validating:) is generic and looked up type
                // metadata on every call (measured: docs/evidence/code-measurements.md#json-parser-strings).
                if isASCII { return String(decoding: content, as: UTF8.self) }
                guard let text = String(validating: content, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start, problem: "a string is not valid UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw problem("a control character (0x\(String(byte, radix: 16))) inside a string must be escaped") }
            if byte >= 0x80 { isASCII = false }
            index += 1
        }
        guard index < bytes.count else { throw JSONSyntaxError(offset: start, problem: "a string is not closed") }
        return try parseEscapedString(start: start, contentStart: contentStart)
    }

    private mutating func parseEscapedString(start: Int, contentStart: Int) throws(JSONSyntaxError) -> String {
        var utf8 = Array(bytes[contentStart..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start, problem: "a string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0c)
                case UInt8(ascii: "n"): utf8.append(0x0a)
                case UInt8(ascii: "r"): utf8.append(0x0d)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): appendUTF8(of: try parseUnicodeEscape(), to: &utf8)
                default:
                    index -= 2
                    throw problem("invalid escape \(describeByte(at: index + 1)) in a string")
                }
            default:
                guard byte >= 0x20 else { throw problem("a control character (0x\(String(byte, radix: 16))) inside a string must be escaped") }
                utf8.append(byte)
                index += 1
            }
        }
        throw JSONSyntaxError(offset: start, problem: "a string is not closed")
    }

    /// After `\u`: one code point, joining a UTF-16 surrogate pair.
    private mutating func parseUnicodeEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
        let escapeStart = index - 2
        let first = try parseHex4()
        switch first {
        case 0xD800...0xDBFF:
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw JSONSyntaxError(offset: escapeStart, problem: "a \\u escape is an unpaired UTF-16 surrogate")
            }
            index += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                throw JSONSyntaxError(offset: escapeStart, problem: "a \\u escape is an unpaired UTF-16 surrogate")
            }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw JSONSyntaxError(offset: escapeStart, problem: "a \\u escape is an unpaired UTF-16 surrogate")
        default:
            return Unicode.Scalar(first)!
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw problem("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Hex.value(bytes[index]) else {
                throw problem("a \\u escape needs four hex digits, found \(describeByte(at: index))")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func appendUTF8(of scalar: Unicode.Scalar, to utf8: inout [UInt8]) {
        utf8.append(contentsOf: UTF8.encode(scalar)!)
    }

    /// -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw problem("a number needs a digit after '-'") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw JSONSyntaxError(offset: start, problem: "a number must not have a leading zero") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw problem("a number needs a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw problem("a number needs a digit in its exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else {
            throw JSONSyntaxError(offset: start, problem: "the number \(text.prefix(40)) is out of range")
        }
        return .double(double)
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)

    private mutating func expectLiteral(_ literal: [UInt8]) throws(JSONSyntaxError) {
        guard index + literal.count <= bytes.count, bytes[index..<index + literal.count].elementsEqual(literal) else {
            throw problem("unexpected \(describeByte(at: index)), expected a value")
        }
        index += literal.count
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0a, 0x0d: index += 1
            default: return
            }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func describeByte(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of input" }
        let byte = bytes[offset]
        if byte >= 0x21, byte < 0x7f { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    private func problem(_ text: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: index, problem: text)
    }
}

/// What is wrong with a JSON text and where (byte offset from 0).
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    public let offset: Int
    public let problem: String

    public var description: String { "\(problem) at byte \(offset)" }
}
