/// A device token as APNs wants it in `:path`: lowercase hex. Apple does not fix the length, so any
/// even-length hex string of 64…400 characters is accepted; Base64 (as push2mob took) is converted.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    public let hex: String

    public static let minHexLength = 64
    public static let maxHexLength = 400

    public init(validating text: String) throws(TokenProblem) {
        if let hex = Self.normalizedHex(text) {
            self.hex = hex
        } else if !Self.isAllHex(text), let bytes = Base64.decode(text), bytes.count * 2 >= Self.minHexLength, bytes.count * 2 <= Self.maxHexLength {
            self.hex = Hex.encode(bytes)
        } else {
            throw TokenProblem(text: text)
        }
    }

    /// For tokens already validated (read back from our own chunk and retry jobs).
    public init(trustedHex: String) { self.hex = trustedHex }

    /// Enough to recognise a device in logs without publishing the full token.
    public var shortened: String { hex.count <= 12 ? hex : "\(hex.prefix(8))…\(hex.suffix(4))" }
    public var description: String { shortened }

    /// A hex string of the wrong length is a broken hex token, never Base64 by accident.
    private static func isAllHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20) }
    }

    private static func normalizedHex(_ text: String) -> String? {
        let utf8 = text.utf8
        guard utf8.count >= minHexLength, utf8.count <= maxHexLength, utf8.count % 2 == 0 else { return nil }
        var hasUpper = false
        let bytes = utf8.span
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"): hasUpper = true
            default: return nil
            }
        }
        return hasUpper ? text.lowercased() : text
    }
}

/// Why a string is not a device token, in words a person can act on.
public struct TokenProblem: Error, Sendable, CustomStringConvertible {
    public let length: Int
    init(text: String) { length = text.utf8.count }
    public var description: String {
        "not a device token: expected \(DeviceToken.minHexLength)–\(DeviceToken.maxHexLength) hex characters (even count) or Base64, got \(length) characters"
    }
}
