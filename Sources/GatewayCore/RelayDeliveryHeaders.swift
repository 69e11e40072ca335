import PushCore

/// RFC 8030's delivery headers as job fields: `TTL` (§5.2) → `expiration`, `Urgency` (§5.3) →
/// `priority`, `Topic` (§5.4) → `collapse_id`.
struct RelayDeliveryHeaders: Hashable {
    /// APNs keeps a notification for a limited time anyway; 30 days is also what Pushworker's Web
    /// Push jobs allow as a TTL. A longer TTL is cut to it, not refused.
    static let maxTTL = 30 * 86400
    /// RFC 8030 §5.4: a topic is at most 32 characters of the URL-safe Base64 alphabet.
    static let maxTopicLength = 32

    /// UNIX seconds; 0 (TTL 0 or no TTL header) = APNs tries once.
    let expiration: Int
    let priority: Int
    let collapseID: String?

    init(header: (String) -> String?, now: Int) throws(RelayRefusal) {
        expiration = try Self.expiration(header("TTL"), now: now)
        priority = try Self.priority(header("Urgency"))
        collapseID = try Self.collapseID(header("Topic"))
    }

    /// RFC 8030 §5.2 requires TTL, delta-seconds (RFC 9111 §1.2.2: digits only); toot-relay reads a
    /// missing one as no expiration, which a job spells 0. A value too large for an Int is capped too.
    private static func expiration(_ value: String?, now: Int) throws(RelayRefusal) -> Int {
        guard let value else { return 0 }
        let text = trimmed(value)
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .badRequest("header TTL: must be a number of seconds (0 or more), got \(shown(value))")
        }
        let seconds = Int(text).map { min($0, maxTTL) } ?? maxTTL
        return seconds == 0 ? 0 : now + seconds
    }

    /// RFC 8030 §5.3's four urgencies: APNs' priority 5 (power-considerate) for the two low ones.
    private static func priority(_ value: String?) throws(RelayRefusal) -> Int {
        guard let value else { return 10 }
        switch trimmed(value).lowercased() {
        case "very-low", "low": return 5
        case "normal", "high": return 10
        default: throw .badRequest("header Urgency: must be very-low, low, normal or high (RFC 8030 §5.3), got \(shown(value))")
        }
    }

    private static func collapseID(_ value: String?) throws(RelayRefusal) -> String? {
        guard let value else { return nil }
        let text = trimmed(value)
        let isURLSafeBase64 = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }
        guard !text.isEmpty, text.utf8.count <= maxTopicLength, isURLSafeBase64 else {
            throw .badRequest("header Topic: must be 1–\(maxTopicLength) characters of A–Z a–z 0–9 - _ (RFC 8030 §5.4), got \(shown(value))")
        }
        return text
    }

    /// Without the optional white space around a header value (RFC 9110 §5.5).
    static func trimmed(_ value: String) -> String {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let first = value.firstIndex(where: { !isSpace($0) }), let last = value.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(value[first...last])
    }

    /// A header value quoted for a message, cut and with control characters escaped.
    static func shown(_ value: String) -> String {
        JobParser.rendered(.string(value))
    }
}
