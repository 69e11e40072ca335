/// One device as a platform names it: `given` is the text as the job or the group gave it (what
/// events name, so an application can match them), `identity` what makes two spellings one
/// device and what the platform is sent (APNs: the token in lowercase hex, for `:path`).
///
/// `init(validating:)` reads an APNs token. Apple does not fix the length, so any even-length
/// hex string of 64…400 characters is accepted. Base64 only in the form push2mob took: 44
/// characters of the standard alphabet with one `=`, 32 bytes; any other non-hex text is refused
/// rather than read as a different device.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    public let identity: String
    public let given: String

    public static let minHexLength = 64
    public static let maxHexLength = 400
    static let base64Length = 44

    public init(validating text: String) throws(TokenProblem) {
        if let hex = Self.normalizedHex(text) {
            self.identity = hex
        } else if let bytes = Self.base64Bytes(text) {
            self.identity = Hex.encode(bytes)
        } else {
            throw TokenProblem(text: text)
        }
        self.given = text
    }

    /// For tokens already validated (read back from our own chunk and retry jobs).
    public init(trustedHex: String) {
        self.identity = trustedHex
        self.given = trustedHex
    }

    /// A device another platform's rules read (its identity already normalised).
    public init(identity: String, given: String) {
        self.identity = identity
        self.given = given
    }

    /// One device whatever its spelling.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.identity == rhs.identity }
    public func hash(into hasher: inout Hasher) { hasher.combine(identity) }

    /// Enough to recognise a device in logs without publishing the full token.
    public var shortened: String { identity.count <= 12 ? identity : "\(identity.prefix(8))…\(identity.suffix(4))" }
    public var description: String { shortened }

    private static func base64Bytes(_ text: String) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count == base64Length, utf8.last == UInt8(ascii: "="),
              !utf8.contains(UInt8(ascii: "-")), !utf8.contains(UInt8(ascii: "_")),
              let bytes = Base64.decode(text), bytes.count == 32 else { return nil }
        return bytes
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
        "not a device token: expected \(DeviceToken.minHexLength)–\(DeviceToken.maxHexLength) hex characters (even count) "
            + "or \(DeviceToken.base64Length) characters of Base64 ending in '=' (32 bytes), got \(length) characters"
    }
}
