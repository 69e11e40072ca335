import PushCore

/// The APNs part of reading a job: `push_type`, `priority`, `collapse_id` and `topic`, and the
/// payload checks APNs would otherwise answer with a 400 or 413 for every device.
public struct APNsJobRules: PlatformJobRules {
    public static let maxCollapseIDLength = 64
    public static let maxTopicLength = 255

    public init() {}

    public var platformName: String { "apns" }

    public var fieldNames: [String] { ["push_type", "priority", "collapse_id", "topic"] }

    public var payloadDescription: String { "the APNs payload object, e.g. {\"aps\":{\"alert\":\"Hello\"}}" }

    /// A device token in hex (or push2mob's 44-character Base64): `DeviceToken(validating:)`.
    public func device(from value: JSONValue) throws(DeviceProblem) -> DeviceToken {
        guard case let .string(text) = value else { throw DeviceProblem("must be a string, got \(value.typeName)") }
        do { return try DeviceToken(validating: text) } catch { throw DeviceProblem(error.description) }
    }

    public func options(from fields: JobFields, payload: PayloadObject) throws(JobRejection) -> any PlatformOptions {
        let aps = payload.shape(of: "aps")
        let payloadByteCount = payload.bytes.count
        let pushType = try parsePushType(fields["push_type"], aps: aps)
        if pushType != .mdm {
            guard let aps else {
                throw JobRejection(field: "payload.aps", "is required for \(pushType.rawValue) pushes (APNs reads the aps dictionary)")
            }
            guard case .object = aps else {
                throw JobRejection(field: "payload.aps", "must be a JSON object, got \(aps.typeName)")
            }
        }
        guard payloadByteCount <= pushType.maxPayloadBytes else {
            throw JobRejection(field: "payload", "is \(payloadByteCount) bytes; APNs allows at most \(pushType.maxPayloadBytes) bytes for \(pushType.rawValue) pushes")
        }
        let priority = try parsePriority(fields["priority"], pushType: pushType)
        let collapseID = try fields.string("collapse_id", maxBytes: Self.maxCollapseIDLength)
        let topic = try fields.string("topic", maxBytes: Self.maxTopicLength)
        if let topic, topic.isEmpty || topic.contains(" ") {
            throw JobRejection(field: "topic", "must be a bundle ID such as com.example.app (no spaces)")
        }
        return APNsJobOptions(pushType: pushType, priority: priority, collapseID: collapseID, topic: topic)
    }

    private func parsePushType(_ value: JSONValue?, aps: JSONShape?) throws(JobRejection) -> APNsPushType {
        guard let value, value != .null else {
            // Background when aps carries nothing but content-available (repeated or not): Apple, "Pushing background updates to your App".
            if case let .object(names)? = aps, !names.isEmpty, names.allSatisfy({ $0 == "content-available" }) {
                return .background
            }
            return .alert
        }
        guard case let .string(text) = value else {
            throw JobRejection(field: "push_type", "must be a string, got \(value.typeName)")
        }
        try JobParser.rejectControlCharacters(in: text, field: "push_type")
        guard let type = APNsPushType(rawValue: text) else {
            throw JobRejection(field: "push_type", "unknown push type \(JobParser.rendered(value)) (one of \(APNsPushType.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return type
    }

    private func parsePriority(_ value: JSONValue?, pushType: APNsPushType) throws(JobRejection) -> Int {
        guard let value, value != .null else { return pushType == .background ? 5 : 10 }
        guard let number = value.exactInteger, [1, 5, 10].contains(number) else {
            throw JobRejection(field: "priority", "must be 10, 5 or 1, got \(JobParser.rendered(value))")
        }
        if pushType == .background, number == 10 {
            throw JobRejection(field: "priority", "background pushes must use priority 5 or 1 (APNs rejects 10)")
        }
        return number
    }
}

extension JobParser {
    /// The parser for APNs jobs.
    public static let apns = JobParser(rules: APNsJobRules())
}
