import PushCore

/// The APNs part of reading a job: `push_type`, `priority`, `collapse_id` and `topic`, and the
/// payload checks APNs would otherwise answer with a 400 or 413 for every device.
public struct APNsJobRules: PlatformJobRules {
    public static let maxCollapseIDLength = 64
    public static let maxTopicLength = 255

    /// `push_type_rules`: a job that breaks its push type's rules (`APNsPushTypeRule`) is rejected,
    /// or sent with a warning logged once per job.
    public enum PushTypeRules: String, Sendable, CaseIterable {
        case reject, warn
    }

    /// Whether the app's connections use token (JWT) authentication; `location` and
    /// `liveactivity` pushes need it.
    public let tokenAuthentication: Bool
    public let pushTypeRules: PushTypeRules

    public init(tokenAuthentication: Bool = true, pushTypeRules: PushTypeRules = .reject) {
        self.tokenAuthentication = tokenAuthentication
        self.pushTypeRules = pushTypeRules
    }

    public var platformName: String { "apns" }

    public var fieldNames: [String] { ["push_type", "priority", "collapse_id", "topic", "live_activity", "channel"] }

    /// `channel`: a Live Activity broadcast instead of devices (iOS 18+).
    public func channel(from fields: JobFields) throws(JobRejection) -> String? {
        guard let value = fields["channel"], value != .null else { return nil }
        guard case let .string(text) = value else { throw JobRejection(field: "channel", "must be a channel id (a string), got \(value.typeName)") }
        guard APNsChannelID.isValid(text) else {
            throw JobRejection(field: "channel", "must be a channel id as pushworker channels create printed it (base64), got \(JobParser.rendered(value))")
        }
        return text
    }

    public var payloadDescription: String { "the APNs payload object, e.g. {\"aps\":{\"alert\":\"Hello\"}} (or a live_activity section)" }

    /// A `live_activity` section builds the payload (`APNsLiveActivity`); it replaces `payload`.
    public func payload(from fields: JobFields, now: Int) throws(JobRejection) -> [UInt8]? {
        guard let section = fields["live_activity"], section != .null else { return nil }
        guard fields["payload"] == nil else {
            throw JobRejection(field: "live_activity", "replaces payload: give one of them, not both")
        }
        return try APNsLiveActivity(section, now: now).payload
    }

    /// A device token in hex (or push2mob's 44-character Base64): `DeviceToken(validating:)`.
    public func device(from value: JSONValue) throws(DeviceProblem) -> DeviceToken {
        guard case let .string(text) = value else { throw DeviceProblem("must be a string, got \(value.typeName)") }
        do { return try DeviceToken(validating: text) } catch { throw DeviceProblem(error.description) }
    }

    public func options(from fields: JobFields, payload: PayloadObject) throws(JobRejection) -> any PlatformOptions {
        let aps = payload.shape(of: "aps")
        let payloadByteCount = payload.bytes.count
        let liveActivity = fields["live_activity"].map { $0 != .null } ?? false
        let channel = try self.channel(from: fields)
        if channel != nil, let given = fields["push_type"], given != .null, given != .string(APNsPushType.liveactivity.rawValue) {
            // Apple's broadcast takes Live Activity pushes only.
            throw JobRejection(field: "push_type", "must be liveactivity (or left out) in a broadcast job, got \(JobParser.rendered(given))")
        }
        let pushType = try parsePushType(fields["push_type"], aps: aps, liveActivity: liveActivity || channel != nil)
        if channel != nil {
            guard fields["collapse_id"] == nil || fields["collapse_id"] == .null else {
                throw JobRejection(field: "collapse_id", "is not sent with a broadcast (APNs takes none on a channel)")
            }
        }
        if pushType != .mdm {
            guard let aps else {
                throw JobRejection(field: "payload.aps", "is required for \(pushType.rawValue) pushes (APNs reads the aps dictionary)")
            }
            guard case .object = aps else {
                throw JobRejection(field: "payload.aps", "must be a JSON object, got \(aps.typeName)")
            }
        }
        let maxPayloadBytes = channel != nil ? APNsChannelID.maxBroadcastPayloadBytes : pushType.maxPayloadBytes
        guard payloadByteCount <= maxPayloadBytes else {
            throw JobRejection(field: "payload", "is \(payloadByteCount) bytes; APNs allows at most \(maxPayloadBytes) bytes for \(channel != nil ? "broadcasts" : "\(pushType.rawValue) pushes")")
        }
        let priority = try parsePriority(fields["priority"], pushType: pushType)
        let collapseID = try fields.string("collapse_id", maxBytes: Self.maxCollapseIDLength)
        let topic = try fields.string("topic", maxBytes: Self.maxTopicLength)
        if let topic, topic.isEmpty || topic.contains(" ") {
            throw JobRejection(field: "topic", "must be a bundle ID such as com.example.app (no spaces)")
        }
        var options = APNsJobOptions(pushType: pushType, priority: priority, collapseID: collapseID, topic: topic)
        options.channel = channel
        if let broken = ruleBroken(by: pushType, priority: priority, topic: topic, payload: payload) {
            guard pushTypeRules == .warn else { throw broken }
            options.ruleWarning = "\(broken.field.map { "\($0) " } ?? "")\(broken.problem) (sent anyway: push_type_rules is warn)"
        }
        return options
    }

    /// The first of the push type's rules the job breaks: a topic meant for another push type, a
    /// priority the type does not take, certificate authentication where the type needs a token,
    /// or an `aps` the type cannot be delivered with.
    func ruleBroken(by type: APNsPushType, priority: Int, topic: String?, payload: PayloadObject) -> JobRejection? {
        let rule = APNsPushTypeRule.rule(for: type)
        // Only suffixes no bundle ID would end in by chance (`com.acme.voip` may be an app's own).
        if let topic, type.topicSuffix.map(topic.hasSuffix) != true,
           let other = APNsPushType.allCases.first(where: { other in
               other != type && other.topicSuffix.map { topic.hasSuffix($0) && ($0.contains("-") || $0.contains("pushkit")) } == true
           }) {
            return JobRejection(field: "topic", "ends in \(other.topicSuffix ?? ""), the topic of \(other.rawValue) pushes, not of \(type.rawValue) ones")
        }
        if !rule.priorities.contains(priority) {
            let allowed = rule.priorities.sorted(by: >).map(String.init).joined(separator: " or ")
            return JobRejection(field: "priority", "must be \(allowed) for \(type.rawValue) pushes, got \(priority)")
        }
        if rule.needsTokenAuthentication, !tokenAuthentication {
            return JobRejection(field: "push_type", "\(type.rawValue) pushes need token authentication (a .p8 key); this app uses a certificate")
        }
        guard rule.readsAPS else { return nil }
        guard case let .object(aps)? = payload["aps"] else { return nil }  // checked above: an object
        return rule.apsProblem(aps).map { JobRejection(field: $0.field, $0.problem) }
    }

    private func parsePushType(_ value: JSONValue?, aps: JSONShape?, liveActivity: Bool) throws(JobRejection) -> APNsPushType {
        if liveActivity, let value, value != .null, value != .string(APNsPushType.liveactivity.rawValue) {
            throw JobRejection(field: "push_type", "must be liveactivity (or left out) in a job with a live_activity section, got \(JobParser.rendered(value))")
        }
        guard let value, value != .null else {
            if liveActivity { return .liveactivity }
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
