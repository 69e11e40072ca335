import PushCore

/// The FCM part of reading a job: `priority` and `collapse_id`, and the payload, which is the FCM
/// HTTP v1 `message` object without its target (`token`, `topic`, `condition`: the worker sets the
/// token per device). What FCM would refuse with INVALID_ARGUMENT for every device is refused here,
/// naming the member (Firebase, "REST Resource: projects.messages" and "FCM error codes").
public struct FCMJobRules: PlatformJobRules {
    /// FCM's limit for a message to a token (Firebase, "About FCM messages").
    public static let maxPayloadBytes = 4096
    /// `android.ttl` at most (Firebase: "The maximum time to live supported is 4 weeks").
    public static let maxTTLSeconds = 2_419_200
    public static let maxCollapseKeyLength = 64
    /// Registration tokens are about 160 characters today; Google does not fix the length.
    public static let tokenLength = 16...4096
    /// The members of a message the payload may hold.
    public static let messageMembers: Set<String> = ["data", "notification", "android", "apns", "webpush", "fcm_options"]
    static let targetMembers: Set<String> = ["token", "topic", "condition"]

    public init() {}

    public var platformName: String { "fcm" }

    public var fieldNames: [String] { ["priority", "collapse_id"] }

    public var payloadDescription: String {
        "the FCM message object without token/topic/condition, e.g. {\"notification\":{\"title\":\"Hi\",\"body\":\"…\"},\"data\":{\"k\":\"v\"}}"
    }

    /// A registration token: the identity is the token as given (FCM tokens are case-sensitive).
    public func device(from value: JSONValue) throws(DeviceProblem) -> DeviceToken {
        guard case let .string(text) = value else { throw DeviceProblem("must be an FCM registration token (a string), got \(value.typeName)") }
        try Self.checkRegistrationToken(text)
        return DeviceToken(identity: text, given: text)
    }

    /// Length and characters: tokens are made of A–Z, a–z, 0–9, '-', '_', ':' and '.'; anything
    /// else (spaces, quotes, a device token from another platform's JSON) is a publisher's mistake.
    public static func checkRegistrationToken(_ text: String) throws(DeviceProblem) {
        let length = text.utf8.count
        guard length > 0 else { throw DeviceProblem("is empty; an FCM registration token is a non-empty string") }
        guard tokenLength.contains(length) else {
            throw DeviceProblem("is \(length) characters; an FCM registration token has \(tokenLength.lowerBound)–\(tokenLength.upperBound)")
        }
        for (offset, byte) in text.utf8.enumerated() where !isTokenByte(byte) {
            let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
            throw DeviceProblem("has \(shown) at offset \(offset); an FCM registration token is made of A–Z, a–z, 0–9, '-', '_', ':' and '.'")
        }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."): true
        default: false
        }
    }

    public func options(from fields: JobFields, payload: PayloadObject) throws(JobRejection) -> any PlatformOptions {
        guard payload.bytes.count <= Self.maxPayloadBytes else {
            throw JobRejection(field: "payload", "is \(payload.bytes.count) bytes; FCM allows at most \(Self.maxPayloadBytes) bytes in a message")
        }
        // At most 4 KiB, checked by the job parser: building it whole costs little.
        guard case let .object(message)? = try? JSONValue.parse(payload.bytes) else {
            throw JobRejection(field: "payload", "must be a JSON object (the FCM message)")
        }
        for name in message.keys.sorted() where !Self.messageMembers.contains(name) {
            if Self.targetMembers.contains(name) {
                throw JobRejection(field: "payload.\(name)", "the worker sets the target (token) for each device; give devices in \"tokens\" or \"groups\", not in the payload")
            }
            throw JobRejection(field: "payload.\(JobParser.rendered(.string(name)).dropFirst().dropLast())", "is not a member of an FCM message (allowed: \(Self.messageMembers.sorted().joined(separator: ", ")))")
        }
        for name in ["notification", "apns", "webpush", "fcm_options"] {
            if let value = message[name], !value.isObject {
                throw JobRejection(field: "payload.\(name)", "must be a JSON object, got \(value.typeName)")
            }
        }
        if let data = message["data"] { try Self.checkData(data, field: "payload.data") }

        let priority = try fields.integer("priority", range: 1...10)
        if let priority, ![1, 5, 10].contains(priority) {
            throw JobRejection(field: "priority", "must be 10, 5 or 1 (android.priority HIGH, NORMAL or NORMAL), got \(priority)")
        }
        let collapseKey = try fields.string("collapse_id", maxBytes: Self.maxCollapseKeyLength)
        if let collapseKey, collapseKey.isEmpty {
            throw JobRejection(field: "collapse_id", "becomes android.collapse_key: 1–\(Self.maxCollapseKeyLength) bytes, not empty")
        }
        if let android = message["android"] {
            let expiration = fields["expiration"].flatMap { $0 == .null ? nil : $0 }
            try Self.checkAndroid(android, jobPriority: priority, jobCollapseKey: collapseKey, jobExpiration: expiration)
        }
        return FCMJobOptions(priority: priority, collapseKey: collapseKey)
    }

    /// FCM's data values are strings, and some keys are its own (Firebase, "Set the data payload").
    static func checkData(_ value: JSONValue, field: String) throws(JobRejection) {
        guard case let .object(members) = value else {
            throw JobRejection(field: field, "must be a JSON object of string values, got \(value.typeName)")
        }
        for key in members.keys.sorted() {
            let shownKey = String(JobParser.rendered(.string(key)).dropFirst().dropLast())
            if isReservedDataKey(key) {
                throw JobRejection(field: "\(field).\(shownKey)", "is a reserved key (FCM refuses \"from\", \"message_type\" and keys starting with \"google\" or \"gcm\")")
            }
            if let member = members[key], case .string = member { continue }
            throw JobRejection(field: "\(field).\(shownKey)", "must be a string (FCM data values are strings), got \(JobParser.rendered(members[key] ?? .null))")
        }
    }

    static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm")
    }

    private static func checkAndroid(_ value: JSONValue, jobPriority: Int?, jobCollapseKey: String?, jobExpiration: JSONValue?) throws(JobRejection) {
        guard case let .object(android) = value else {
            throw JobRejection(field: "payload.android", "must be a JSON object (the AndroidConfig), got \(value.typeName)")
        }
        if let priority = android["priority"] {
            if jobPriority != nil {
                throw JobRejection(field: "payload.android.priority", "is also given as the job's \"priority\": give it in one place")
            }
            guard case let .string(text) = priority, ["HIGH", "NORMAL"].contains(text) else {
                throw JobRejection(field: "payload.android.priority", "must be \"HIGH\" or \"NORMAL\", got \(JobParser.rendered(priority))")
            }
        }
        if let ttl = android["ttl"] {
            if jobExpiration != nil {
                throw JobRejection(field: "payload.android.ttl", "is also given by the job's \"expiration\": give it in one place")
            }
            guard case let .string(text) = ttl, let seconds = FCMDurationText.seconds(text) else {
                throw JobRejection(field: "payload.android.ttl", "must be a duration string of seconds such as \"3600s\" or \"3.5s\", got \(JobParser.rendered(ttl))")
            }
            guard seconds <= Double(maxTTLSeconds) else {
                throw JobRejection(field: "payload.android.ttl", "is \(text); FCM keeps a message at most 4 weeks (\(maxTTLSeconds)s)")
            }
        }
        if let collapseKey = android["collapse_key"] {
            if jobCollapseKey != nil {
                throw JobRejection(field: "payload.android.collapse_key", "is also given as the job's \"collapse_id\": give it in one place")
            }
            guard case .string = collapseKey else {
                throw JobRejection(field: "payload.android.collapse_key", "must be a string, got \(JobParser.rendered(collapseKey))")
            }
        }
        if let data = android["data"] { try checkData(data, field: "payload.android.data") }
    }
}

extension JobParser {
    /// The parser for FCM jobs.
    public static let fcm = JobParser(rules: FCMJobRules())
}

extension JSONValue {
    var isObject: Bool {
        if case .object = self { true } else { false }
    }
}
