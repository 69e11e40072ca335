/// Checks that a payload is one well-formed JSON object with a single pass over its bytes: APNs
/// rejects anything else, and decoding with Foundation per request would dominate the hot path.
/// (UTF-8 validity inside strings is not checked.)
struct JSONObjectScanner {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private static let maxDepth = 64

    static func isObject(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var scanner = JSONObjectScanner(bytes: bytes)
        scanner.skipWhitespace()
        guard scanner.peek == UInt8(ascii: "{"), scanner.value(depth: 0) else { return false }
        scanner.skipWhitespace()
        return scanner.index == bytes.count
    }

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private var peek: UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

    private mutating func skipWhitespace() {
        while let byte = self.peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { self.index += 1 }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard self.peek == byte else { return false }
        self.index += 1
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        guard depth < Self.maxDepth, let byte = self.peek else { return false }
        switch byte {
        case UInt8(ascii: "{"): return self.object(depth: depth + 1)
        case UInt8(ascii: "["): return self.array(depth: depth + 1)
        case UInt8(ascii: "\""): return self.string()
        case UInt8(ascii: "t"): return self.literal("true")
        case UInt8(ascii: "f"): return self.literal("false")
        case UInt8(ascii: "n"): return self.literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return self.number()
        default: return false
        }
    }

    private mutating func object(depth: Int) -> Bool {
        self.index += 1
        self.skipWhitespace()
        if self.consume(UInt8(ascii: "}")) { return true }
        while true {
            self.skipWhitespace()
            guard self.peek == UInt8(ascii: "\""), self.string() else { return false }
            self.skipWhitespace()
            guard self.consume(UInt8(ascii: ":")) else { return false }
            self.skipWhitespace()
            guard self.value(depth: depth) else { return false }
            self.skipWhitespace()
            if self.consume(UInt8(ascii: ",")) { continue }
            return self.consume(UInt8(ascii: "}"))
        }
    }

    private mutating func array(depth: Int) -> Bool {
        self.index += 1
        self.skipWhitespace()
        if self.consume(UInt8(ascii: "]")) { return true }
        while true {
            self.skipWhitespace()
            guard self.value(depth: depth) else { return false }
            self.skipWhitespace()
            if self.consume(UInt8(ascii: ",")) { continue }
            return self.consume(UInt8(ascii: "]"))
        }
    }

    private mutating func string() -> Bool {
        self.index += 1
        while let byte = self.peek {
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard let escaped = self.peek else { return false }
                self.index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let hex = self.peek, hex.isHexDigit else { return false }
                        self.index += 1
                    }
                default:
                    return false
                }
            case 0..<0x20:
                return false
            default:
                continue
            }
        }
        return false
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard self.bytes.count - self.index >= count else { return false }
        let start = word.utf8Start
        for offset in 0..<count where self.bytes[self.index + offset] != start[offset] { return false }
        self.index += count
        return true
    }

    private mutating func number() -> Bool {
        _ = self.consume(UInt8(ascii: "-"))
        if self.consume(UInt8(ascii: "0")) {
            // A leading zero stands alone: "01" is not JSON.
        } else if self.digits() == 0 {
            return false
        }
        if self.consume(UInt8(ascii: ".")), self.digits() == 0 { return false }
        if self.consume(UInt8(ascii: "e")) || self.consume(UInt8(ascii: "E")) {
            if !self.consume(UInt8(ascii: "+")) { _ = self.consume(UInt8(ascii: "-")) }
            if self.digits() == 0 { return false }
        }
        return true
    }

    private mutating func digits() -> Int {
        let start = self.index
        while let byte = self.peek, byte.isDecimalDigit { self.index += 1 }
        return self.index - start
    }
}

extension UInt8 {
    var isDecimalDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    var isHexDigit: Bool {
        self.isDecimalDigit || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
