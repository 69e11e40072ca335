import PushCore

/// The Web Push part of reading a job: `priority` and `collapse_id`, and the payload, which is the
/// plaintext the browser receives (the job's `payload` object as JSON). It must fit one encrypted
/// record, and a Declarative Web Push message (Safari 18.4+, `{"web_push": 8030, …}`) must have
/// what Safari needs to show it without a service worker.
public struct WebPushJobRules: PlatformJobRules {
    /// RFC 8291 §4: a push service must accept a 4096-byte body; 86 bytes of header, 16 of tag and
    /// the 1-byte delimiter leave 3993 for the plaintext.
    public static let maxPayloadBytes = 3993
    /// RFC 8030 §5.4: a topic is at most 32 characters of the base64url alphabet.
    public static let maxTopicLength = 32
    /// The `web_push` member's value that marks a Declarative Web Push message.
    public static let declarativeMarker = 8030

    public init() {}

    public var platformName: String { "webpush" }

    public var fieldNames: [String] { ["priority", "collapse_id"] }

    public var payloadDescription: String {
        "the message the browser's service worker receives, a JSON object, e.g. {\"title\":\"Hello\"} (or a Declarative Web Push message {\"web_push\":8030,\"notification\":{\"title\":…,\"navigate\":…}})"
    }

    /// A subscription: its JSON object, or a string holding its JSON or its compact form. The
    /// device's identity is its compact form, endpoint and keys: the same subscription written
    /// either way is one device, and two with one endpoint but other keys (a group holding a stale
    /// record beside a fresh one) are two, each encrypted for its own keys. The browser decrypts the
    /// one whose keys it holds and drops the other; keeping one of them at random lost the message
    /// whenever the stale one won. Events name it as given.
    public func device(from value: JSONValue) throws(DeviceProblem) -> DeviceToken {
        do throws(SubscriptionProblem) {
            switch value {
            case .object:
                let subscription = try WebPushSubscription(json: value)
                return DeviceToken(identity: subscription.compact, given: subscription.compact)
            case .string(let text):
                return DeviceToken(identity: try WebPushSubscription(text: text).compact, given: text)
            default:
                throw SubscriptionProblem(field: nil, "must be a subscription object or string, got \(value.typeName)")
            }
        } catch {
            throw DeviceProblem(member: error.field, error.problem)
        }
    }

    public func options(from fields: JobFields, payload: PayloadObject) throws(JobRejection) -> any PlatformOptions {
        guard payload.bytes.count <= Self.maxPayloadBytes else {
            throw JobRejection(field: "payload", "is \(payload.bytes.count) bytes; Web Push carries at most \(Self.maxPayloadBytes) bytes in one encrypted message")
        }
        if let marker = payload["web_push"] {
            try checkDeclarative(marker: marker, notification: payload["notification"])
        }
        let priority = try fields.integer("priority", range: 1...10)
        if let priority, ![1, 5, 10].contains(priority) {
            throw JobRejection(field: "priority", "must be 10, 5 or 1 (Urgency high, normal or low), got \(priority)")
        }
        let topic = try fields.string("collapse_id", maxBytes: Self.maxTopicLength)
        if let topic, topic.isEmpty || !topic.utf8.allSatisfy(Self.isTopicByte) {
            throw JobRejection(field: "collapse_id", "becomes the Web Push Topic: 1–\(Self.maxTopicLength) characters of A–Z, a–z, 0–9, '-' or '_' (Mozilla's service accepts only letters and digits)")
        }
        return WebPushJobOptions(priority: priority, topic: topic)
    }

    private func checkDeclarative(marker: JSONValue, notification: JSONValue?) throws(JobRejection) {
        guard marker.exactInteger == Self.declarativeMarker else {
            throw JobRejection(field: "payload.web_push", "must be \(Self.declarativeMarker) for a Declarative Web Push message, got \(JobParser.rendered(marker))")
        }
        guard case let .object(members)? = notification else {
            throw JobRejection(field: "payload.notification", "is required in a Declarative Web Push message: an object with at least title and navigate")
        }
        for name in ["title", "navigate"] {
            guard case let .string(text)? = members[name], !text.isEmpty else {
                throw JobRejection(field: "payload.notification.\(name)", "is required in a Declarative Web Push message (a non-empty string)")
            }
        }
    }

    private static func isTopicByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}

extension JobParser {
    /// The parser for Web Push jobs.
    public static let webPush = JobParser(rules: WebPushJobRules())
}
