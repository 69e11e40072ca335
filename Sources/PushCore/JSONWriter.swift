/// Writes small flat JSON objects straight into bytes. Events and re-published jobs are built on the
/// hot path, where going through Foundation's object graph costs more than the whole send.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    public mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return rawField(key, "null") }
        appendKey(key)
        Self.appendString(value, to: &bytes)
    }

    /// A member whose name is data (an app's name), escaped like a value.
    public mutating func field(named key: String, _ value: String?) {
        appendSeparator()
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        if let value { Self.appendString(value, to: &bytes) } else { bytes.append(contentsOf: Self.null) }
    }

    /// A member name written with its quotes and colon (`"\"devices\":"`), for objects written per
    /// job: one copy of static bytes, where a `StaticString` key takes four appends and an encoded
    /// array a retain and a generic copy (measured: docs/evidence/code-measurements.md#json-writer).
    public struct Name: Sendable {
        fileprivate let quoted: StaticString

        public init(quoted: StaticString) {
            assert(Self.isQuoted(quoted), "a JSONWriter.Name is a plain name in quotes followed by a colon")
            self.quoted = quoted
        }

        private static func isQuoted(_ quoted: StaticString) -> Bool {
            quoted.withUTF8Buffer { name in
                name.count >= 3 && name.first == UInt8(ascii: "\"") && name.last == UInt8(ascii: ":")
                    && name[name.count - 2] == UInt8(ascii: "\"")
                    && name[1..<(name.count - 2)].allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            }
        }
    }

    public mutating func field(_ name: Name, _ value: String?) {
        appendName(name)
        if let value { Self.appendString(value, to: &bytes) } else { bytes.append(contentsOf: Self.null) }
    }

    public mutating func field(_ name: Name, _ value: Int?) {
        appendName(name)
        if let value { appendInteger(value) } else { bytes.append(contentsOf: Self.null) }
    }

    public mutating func field(_ name: Name, time: UnixTime) {
        appendName(name)
        appendTime(time)
    }

    /// A value this program wrote itself (an event's name), so it needs no escaping.
    public mutating func field(_ name: Name, formatted value: String) {
        assert(!Self.needsEscaping(value), "a formatted value needs no escaping")
        appendName(name)
        Self.appendQuoted(value, to: &bytes)
    }

    private mutating func appendName(_ name: Name) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        name.quoted.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private static let null = Array("null".utf8)

    public mutating func field(_ key: StaticString, _ value: Int?) {
        guard let value else { return rawField(key, "null") }
        appendKey(key)
        appendInteger(value)
    }

    private mutating func appendInteger(_ value: Int) {
        // A job.completed event has nine numbers, most of them 0 or 1.
        if (0..<10).contains(value) { return bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)) }
        // Digits straight into the buffer.
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        // Room first, then the digits from the last one back (no reversal of a slice).
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var index = bytes.count
        repeat {
            index -= 1
            bytes[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }

    public mutating func field(_ key: StaticString, _ value: Double) {
        appendKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func field(_ key: StaticString, strings: [String]) {
        appendKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendString(string, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `json` must already be valid JSON (a payload we parsed and re-serialised ourselves).
    public mutating func field(_ key: StaticString, rawJSON json: [UInt8]) {
        appendKey(key)
        bytes.append(contentsOf: json)
    }

    public mutating func rawField(_ key: StaticString, _ json: String) {
        appendKey(key)
        bytes.append(contentsOf: json.utf8)
    }

    /// Mutating, not consuming: a consumed writer's bytes were copied into a new buffer to add
    /// the brace (one allocation and copy per event, `ops/count-instructions`).
    public mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func appendSeparator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    /// Names written in the code need no escaping: copied in one go (scanning each for escapes
    /// showed in a one-token job's CPU; measured: docs/evidence/code-measurements.md#json-writer).
    private mutating func appendKey(_ key: StaticString) {
        appendSeparator()
        assert(Self.isPlainName(key), "JSON member names written in code must need no escaping")
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    private static func isPlainName(_ key: StaticString) -> Bool {
        key.withUTF8Buffer { name in name.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") } }
    }

    /// A UNIX time as an RFC 3339 UTC string, written without an intermediate String.
    public mutating func field(_ key: StaticString, time: UnixTime) {
        appendKey(key)
        appendTime(time)
    }

    private mutating func appendTime(_ time: UnixTime) {
        bytes.append(UInt8(ascii: "\""))
        time.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Scans the string's own UTF-8 storage without a branch per byte, so the compiler vectorizes
    /// the loop: about half the time of stopping at the first special byte for the 36-character ids
    /// of every event (a micro-benchmark of both loops).
    private static func needsEscaping(_ string: String) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { utf8 in
            var special: UInt8 = 0
            for byte in utf8 {
                special |= (byte < 0x20 ? 1 : 0) | (byte == UInt8(ascii: "\"") ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
            }
            return special != 0
        } ?? string.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    /// A string that needs no escaping, in quotes: through its contiguous storage, a memcpy
    /// instead of the sequence copy.
    private static func appendQuoted(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        if string.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: string.utf8)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `string` as a quoted JSON string (escaped where it must be); the client library writes with it too.
    public static func appendString(_ string: String, to bytes: inout [UInt8]) {
        // Tokens, ids and reasons never need escaping: copy them in one go.
        guard needsEscaping(string) else { return appendQuoted(string, to: &bytes) }
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
