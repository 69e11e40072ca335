import PushCore

/// A browser's push subscription (W3C Push API `PushSubscription.toJSON()`): where to post
/// (`endpoint`) and the keys to encrypt for (`keys.p256dh`, the browser's P-256 public key, and
/// `keys.auth`, its 16-byte secret; RFC 8291 §2). Read from the JSON a browser gives, or from the
/// compact form `<endpoint>#p256dh=<base64url>&auth=<base64url>` (one string, for Redis groups and
/// command lines; a push endpoint never carries a fragment, since fragments are not sent).
///
/// Checked here: the endpoint is an https URL, and the keys decode to 65 and 16 bytes. That the
/// point lies on the curve is checked where it is used, by the encryption.
public struct WebPushSubscription: Sendable, Hashable {
    public let endpoint: String
    /// 0x04 ‖ X ‖ Y.
    public let p256dh: [UInt8]
    public let auth: [UInt8]

    public static let p256dhLength = 65
    public static let authLength = 16
    /// Endpoints seen in practice are under 500 bytes; the bound keeps a hostile group member small.
    public static let maxEndpointLength = 2048

    public init(endpoint: String, p256dh: [UInt8], auth: [UInt8]) throws(SubscriptionProblem) {
        try Self.checkEndpoint(endpoint)
        guard p256dh.count == Self.p256dhLength, p256dh.first == 0x04 else {
            throw SubscriptionProblem(field: "keys.p256dh", "must be the browser's uncompressed P-256 public key: 65 bytes starting with 0x04 (87 base64url characters), got \(p256dh.count) bytes")
        }
        guard auth.count == Self.authLength else {
            throw SubscriptionProblem(field: "keys.auth", "must be the 16-byte authentication secret (22 base64url characters), got \(auth.count) bytes")
        }
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// From the JSON object a browser's `subscription.toJSON()` gives (other members, such as
    /// `expirationTime`, are ignored).
    public init(json value: JSONValue) throws(SubscriptionProblem) {
        guard case let .object(members) = value else {
            throw SubscriptionProblem(field: nil, "must be a subscription object {\"endpoint\": …, \"keys\": {\"p256dh\": …, \"auth\": …}} or its compact form, got \(value.typeName)")
        }
        guard case let .string(endpoint)? = members["endpoint"] else {
            throw SubscriptionProblem(field: "endpoint", members["endpoint"] == nil ? "is missing" : "must be a string")
        }
        guard case let .object(keys)? = members["keys"] else {
            throw SubscriptionProblem(field: "keys", members["keys"] == nil ? "is missing: the subscription's p256dh and auth keys" : "must be an object with p256dh and auth")
        }
        try self.init(endpoint: endpoint, p256dh: try Self.key(keys["p256dh"], field: "keys.p256dh"),
                      auth: try Self.key(keys["auth"], field: "keys.auth"))
    }

    /// From a string: the subscription's JSON text, or the compact form.
    public init(text: String) throws(SubscriptionProblem) {
        if text.utf8.first == UInt8(ascii: "{") {
            let value: JSONValue
            do { value = try JSONParser.parse(Array(text.utf8)) } catch {
                throw SubscriptionProblem(field: nil, "is not valid JSON (\(error.problem) at byte \(error.offset))")
            }
            try self.init(json: value)
            return
        }
        // Read as UTF-8 bytes: this runs for every message, where Character-wise splitting (grapheme
        // breaking) of a 250-byte subscription cost more than the rest of the parse.
        let bytes = Array(text.utf8)
        guard let hash = bytes.firstIndex(of: UInt8(ascii: "#")) else {
            throw SubscriptionProblem(field: nil, "must be a subscription's JSON or its compact form <endpoint>#p256dh=<base64url>&auth=<base64url>")
        }
        let endpoint = String(decoding: bytes[..<hash], as: UTF8.self)
        var p256dh: String?
        var auth: String?
        for parameter in bytes[(hash + 1)...].split(separator: UInt8(ascii: "&")) {
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = parameter[..<equals], value = String(decoding: parameter[(equals + 1)...], as: UTF8.self)
            if name.elementsEqual("p256dh".utf8) {
                p256dh = value
            } else if name.elementsEqual("auth".utf8) {
                auth = value
            }
        }
        try self.init(endpoint: endpoint, p256dh: try Self.key(p256dh.map(JSONValue.string), field: "keys.p256dh"),
                      auth: try Self.key(auth.map(JSONValue.string), field: "keys.auth"))
    }

    /// The compact form, for a group member.
    public var compact: String {
        "\(endpoint)#p256dh=\(Base64.encode(p256dh, urlSafe: true, padded: false))&auth=\(Base64.encode(auth, urlSafe: true, padded: false))"
    }

    private static func key(_ value: JSONValue?, field: String) throws(SubscriptionProblem) -> [UInt8] {
        guard let value else { throw SubscriptionProblem(field: field, "is missing") }
        guard case let .string(text) = value else { throw SubscriptionProblem(field: field, "must be a base64url string, got \(value.typeName)") }
        guard let bytes = Base64.decode(text) else { throw SubscriptionProblem(field: field, "is not base64url") }
        return bytes
    }

    private static func checkEndpoint(_ endpoint: String) throws(SubscriptionProblem) {
        guard endpoint.utf8.count <= maxEndpointLength else {
            throw SubscriptionProblem(field: "endpoint", "is \(endpoint.utf8.count) bytes; at most \(maxEndpointLength)")
        }
        guard !endpoint.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") }) else {
            throw SubscriptionProblem(field: "endpoint", "must be a URL without spaces, control characters or a fragment")
        }
        // Push services are HTTPS (RFC 8030 §8), and the worker speaks HTTP/2 over TLS only: a plain
        // http endpoint is refused with the job, not failed device by device.
        let scheme = "https://".utf8
        if endpoint.utf8.count > scheme.count,
           zip(endpoint.utf8, scheme).allSatisfy({ given, wanted in given | 0x20 == wanted | 0x20 }) { return }
        throw SubscriptionProblem(field: "endpoint", "must be an https URL (the push service's), got \(JobParser.rendered(.string(String(endpoint.prefix(64)))))")
    }
}

/// Why a value is not a Web Push subscription: the member at fault (`keys.p256dh`) and the problem.
public struct SubscriptionProblem: Error, Sendable, CustomStringConvertible {
    public let field: String?
    public let problem: String

    public init(field: String?, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { field.map { "\($0): \(problem)" } ?? problem }
}
