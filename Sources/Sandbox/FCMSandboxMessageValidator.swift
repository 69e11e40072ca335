import PushCore

/// Why a `messages:send` body is refused, and the target it named if it got that far.
struct FCMSandboxRefusal: Error {
    let problem: FCMSandboxProblem
    var target: String?
}

/// FCM's checks of a `messages:send` body (Firebase, "REST Resource: projects.messages"): a
/// `message` with exactly one of `token`, `topic` and `condition`, a registration token of FCM's
/// characters, string data values without reserved keys, an `android.ttl` Duration of at most four
/// weeks, an `android.priority` FCM knows, and a payload of at most 4096 bytes.
enum FCMSandboxMessageValidator {
    struct Message {
        /// The token, or `/topics/<name>` or the condition.
        var target: String
        /// `android.priority`: 10 for HIGH, 5 for NORMAL, 0 when absent.
        var priority: Int
        var ttlSeconds: Int?
        var collapseKey: String?
    }

    static let messageMembers: Set<String> = ["name", "token", "topic", "condition", "data", "notification", "android", "apns", "webpush", "fcm_options"]
    static let maxPayloadBytes = 4096
    static let maxTTLSeconds = 2_419_200

    static func validate(_ body: [UInt8]) throws(FCMSandboxRefusal) -> Message {
        func refuse(_ field: String?, _ message: String, target: String? = nil) -> FCMSandboxRefusal {
            FCMSandboxRefusal(problem: FCMSandboxProblem(message: message, field: field), target: target)
        }
        guard case let .object(request)? = try? JSONValue.parse(body) else {
            throw refuse(nil, "Invalid JSON payload received. The body is not a JSON object.")
        }
        if let name = request.keys.sorted().first(where: { $0 != "message" && $0 != "validate_only" }) {
            throw refuse(String(name.prefix(64)), "Invalid JSON payload received. Unknown name \"\(name.prefix(64))\": Cannot find field.")
        }
        guard case let .object(message)? = request["message"] else { throw refuse("message", "Request contains an invalid argument: message is required.") }
        if let name = message.keys.sorted().first(where: { !messageMembers.contains($0) }) {
            throw refuse("message.\(name.prefix(64))", "Invalid JSON payload received. Unknown name \"\(name.prefix(64))\" at 'message': Cannot find field.")
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            throw refuse("message", "Exactly one of token, topic or condition must be set, got \(targets.isEmpty ? "none" : targets.joined(separator: ", ")).")
        }
        guard case let .string(targetText)? = message[targets[0]], !targetText.isEmpty else {
            throw refuse("message.\(targets[0])", "Invalid value at 'message.\(targets[0])': a non-empty string is required.")
        }
        let target = targets[0] == "topic" ? "/topics/" + targetText : targetText
        if targets[0] == "token", !targetText.utf8.allSatisfy(isTokenByte) {
            // FCM names a bad token in its message, with no field violation.
            throw refuse(nil, "The registration token is not a valid FCM registration token", target: target)
        }
        // The target and the envelope are not the payload.
        let payloadBytes = body.count - targetText.utf8.count
        guard payloadBytes <= maxPayloadBytes + 64 else {
            throw refuse("message", "Message is too big: \(payloadBytes) bytes, at most \(maxPayloadBytes).", target: target)
        }
        for name in ["notification", "apns", "webpush", "fcm_options"] {
            if let value = message[name], !isObject(value) { throw refuse("message.\(name)", "Invalid value at 'message.\(name)': an object is required.", target: target) }
        }
        if let data = message["data"] { try checkData(data, field: "message.data", target: target) }
        var result = Message(target: target, priority: 0)
        if let android = message["android"] {
            guard case let .object(members) = android else { throw refuse("message.android", "Invalid value at 'message.android': an object is required.", target: target) }
            if let priority = members["priority"] {
                switch priority {
                case .string("HIGH"): result.priority = 10
                case .string("NORMAL"): result.priority = 5
                default: throw refuse("message.android.priority", "Invalid value at 'message.android.priority': \(priority.rendered)", target: target)
                }
            }
            if let ttl = members["ttl"] {
                guard case let .string(text) = ttl, let seconds = durationSeconds(text) else {
                    throw refuse("message.android.ttl", "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), \(ttl.rendered)", target: target)
                }
                guard seconds <= Double(maxTTLSeconds) else {
                    throw refuse("message.android.ttl", "The ttl of \(text) is longer than the maximum of 4 weeks.", target: target)
                }
                result.ttlSeconds = Int(seconds)
            }
            if let collapseKey = members["collapse_key"] {
                guard case let .string(text) = collapseKey else {
                    throw refuse("message.android.collapse_key", "Invalid value at 'message.android.collapse_key': a string is required.", target: target)
                }
                result.collapseKey = text
            }
            if let data = members["data"] { try checkData(data, field: "message.android.data", target: target) }
        }
        return result
    }

    private static func checkData(_ value: JSONValue, field: String, target: String) throws(FCMSandboxRefusal) {
        guard case let .object(members) = value else {
            throw FCMSandboxRefusal(problem: FCMSandboxProblem(message: "Invalid value at '\(field)': an object of strings is required.", field: field), target: target)
        }
        for key in members.keys.sorted() {
            if key == "from" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm") {
                throw FCMSandboxRefusal(problem: FCMSandboxProblem(message: "Invalid data payload key: \(key.prefix(64))", field: "\(field)[\(key.prefix(64))]"), target: target)
            }
            guard case .string = members[key] else {
                throw FCMSandboxRefusal(problem: FCMSandboxProblem(message: "Invalid value at '\(field)[\(key.prefix(64))].value' (TYPE_STRING)", field: "\(field)[\(key.prefix(64))].value"), target: target)
            }
        }
    }

    /// Protobuf's Duration in JSON: digits, up to nine fractional digits, `s`.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 12, whole.utf8.allSatisfy(isDigit) else { return nil }
        if parts.count == 2 { guard !parts[1].isEmpty, parts[1].count <= 9, parts[1].utf8.allSatisfy(isDigit) else { return nil } }
        return Double(number)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isObject(_ value: JSONValue) -> Bool {
        if case .object = value { true } else { false }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."): true
        default: false
        }
    }
}
