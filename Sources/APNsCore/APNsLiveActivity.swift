import PushCore

/// A job's `live_activity` section: the `aps` dictionary of a Live Activity push, built the way
/// ActivityKit documents it ("Starting and updating Live Activities with ActivityKit push
/// notifications") so that publishers name fields instead of writing Apple's hyphenated keys:
///
/// | job field | aps key | events |
/// | --- | --- | --- |
/// | `event` (`start`, `update`, `end`) | `event` | all |
/// | `timestamp` (UNIX seconds; default: when the job is read) | `timestamp` | all |
/// | `content_state` (object) | `content-state` | required for start and update, optional for end |
/// | `stale_date` (UNIX seconds) | `stale-date` | all |
/// | `dismissal_date` (UNIX seconds) | `dismissal-date` | end |
/// | `relevance_score` (number) | `relevance-score` | all |
/// | `attributes_type` (string), `attributes` (object) | `attributes-type`, `attributes` | start, both required |
/// | `input_push_token` (true) | `input-push-token: 1` | start (push-to-start: ask for the new activity's update token) |
/// | `alert` (object: `title`, `body`, `sound`) | `alert` | all |
///
/// Any other member is refused by name, as a typo would otherwise be dropped in silence.
public struct APNsLiveActivity: Sendable, Equatable {
    public enum Event: String, Sendable, CaseIterable {
        case start, update, end
    }

    public let event: Event
    /// The `aps` dictionary's JSON, keys in the order above.
    public let aps: [UInt8]

    static let fieldNames = ["event", "timestamp", "content_state", "stale_date", "dismissal_date", "relevance_score",
                             "attributes_type", "attributes", "input_push_token", "alert"]
    /// The largest UNIX time accepted (year 9999): a date in milliseconds is a mistake worth naming.
    static let maxUnixSeconds = 253_402_300_799

    /// - Parameter now: UNIX seconds, the default `timestamp`.
    public init(_ value: JSONValue, now: Int) throws(JobRejection) {
        guard case let .object(members) = value else {
            throw JobRejection(field: "live_activity", "must be an object, got \(value.typeName)")
        }
        if let unknown = members.keys.sorted().first(where: { !Self.fieldNames.contains($0) }) {
            throw JobRejection(field: "live_activity", "has no member \(JobParser.rendered(.string(unknown))) (its members: \(Self.fieldNames.joined(separator: ", ")))")
        }
        guard case let .string(name)? = members["event"] else {
            throw JobRejection(field: "live_activity.event", "is required: \"start\", \"update\" or \"end\"")
        }
        guard let event = Event(rawValue: name) else {
            throw JobRejection(field: "live_activity.event", "must be \"start\", \"update\" or \"end\", got \(JobParser.rendered(.string(name)))")
        }
        self.event = event

        func time(_ key: String) throws(JobRejection) -> Int? {
            guard let value = members[key], value != .null else { return nil }
            guard let seconds = value.exactInteger, (1...Self.maxUnixSeconds).contains(seconds) else {
                throw JobRejection(field: "live_activity.\(key)", "must be a UNIX time in seconds, got \(JobParser.rendered(value))")
            }
            return seconds
        }
        func object(_ key: String) throws(JobRejection) -> JSONValue? {
            guard let value = members[key], value != .null else { return nil }
            guard case .object = value else {
                throw JobRejection(field: "live_activity.\(key)", "must be an object, got \(value.typeName)")
            }
            return value
        }
        func onlyAt(_ key: String, _ allowed: Event) throws(JobRejection) {
            if let value = members[key], value != .null, event != allowed {
                throw JobRejection(field: "live_activity.\(key)", "is only for a Live Activity \(allowed.rawValue), not \(event.rawValue)")
            }
        }

        let timestamp = try time("timestamp") ?? now
        let contentState = try object("content_state")
        if contentState == nil, event != .end {
            throw JobRejection(field: "live_activity.content_state", "is required for a Live Activity \(event.rawValue): the activity's ContentState as an object")
        }
        let staleDate = try time("stale_date")
        try onlyAt("dismissal_date", .end)
        let dismissalDate = try time("dismissal_date")
        var relevance: JSONValue?
        if let value = members["relevance_score"], value != .null {
            switch value {
            case .int, .double: relevance = value
            default: throw JobRejection(field: "live_activity.relevance_score", "must be a number, got \(value.typeName)")
            }
        }
        try onlyAt("attributes_type", .start)
        try onlyAt("attributes", .start)
        try onlyAt("input_push_token", .start)
        var attributesType: String?
        if let value = members["attributes_type"], value != .null {
            guard case let .string(text) = value, !text.isEmpty, text.utf8.count <= 255 else {
                throw JobRejection(field: "live_activity.attributes_type", "must be the name of the activity's ActivityAttributes type, 1 to 255 bytes")
            }
            try JobParser.rejectControlCharacters(in: text, field: "live_activity.attributes_type")
            attributesType = text
        }
        let attributes = try object("attributes")
        if event == .start {
            guard attributesType != nil else {
                throw JobRejection(field: "live_activity.attributes_type", "is required for a Live Activity start: the name of its ActivityAttributes type")
            }
            guard attributes != nil else {
                throw JobRejection(field: "live_activity.attributes", "is required for a Live Activity start: the activity's attributes as an object")
            }
        }
        var inputPushToken = false
        if let value = members["input_push_token"], value != .null {
            guard case let .bool(flag) = value else {
                throw JobRejection(field: "live_activity.input_push_token", "must be true or false, got \(JobParser.rendered(value))")
            }
            inputPushToken = flag
        }
        let alert = try object("alert")

        var aps: [UInt8] = [UInt8(ascii: "{")]
        func member(_ key: String, _ value: JSONValue) {
            if aps.count > 1 { aps.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(key, to: &aps)
            aps.append(UInt8(ascii: ":"))
            value.append(to: &aps)
        }
        member("timestamp", .int(Int64(timestamp)))
        member("event", .string(event.rawValue))
        if let contentState { member("content-state", contentState) }
        if let staleDate { member("stale-date", .int(Int64(staleDate))) }
        if let dismissalDate { member("dismissal-date", .int(Int64(dismissalDate))) }
        if let relevance { member("relevance-score", relevance) }
        if let attributesType { member("attributes-type", .string(attributesType)) }
        if let attributes { member("attributes", attributes) }
        if inputPushToken { member("input-push-token", .int(1)) }
        if let alert { member("alert", alert) }
        aps.append(UInt8(ascii: "}"))
        self.aps = aps
    }

    /// The whole payload: `{"aps":{…}}`.
    public var payload: [UInt8] {
        Array(#"{"aps":"#.utf8) + aps + [UInt8(ascii: "}")]
    }
}
