import APNsCore
import PushCore

/// pushd's UDP interface (its README): JSON packets on two ports, one registering a device in a
/// group, the other sending a notification to groups. Each packet is read here into what the
/// gateway does with it; the caller owns the sockets.
///
/// Members pushd's README does not list are refused, naming the member, as a job's unknown fields
/// are: a misspelt `expiraton` would otherwise be dropped without a word.
public enum PushdPacket {
    /// The most a UDP datagram carries over IPv4: 65,535 − 8 (UDP header) − 20 (IP header).
    public static let maxPacketBytes = 65_507

    static let registrationMembers = ["device", "group"]
    static let notificationMembers = ["groups", "type", "expiration", "key", "payload"]

    /// `{"device": "<hex token>", "group": "<name>"}`, both required.
    public static func registration(_ bytes: [UInt8]) throws(PushdRefusal) -> PushdRegistration {
        let members = try object(bytes, members: registrationMembers, kind: "registration")
        let deviceText = try string(members, "device")
        let device: DeviceToken
        do { device = try DeviceToken(validating: deviceText) } catch {
            throw PushdRefusal(field: "device", error.description)
        }
        let group = try string(members, "group")
        try checkGroup(group, field: "group")
        return PushdRegistration(device: device.identity, group: group)
    }

    /// `{"groups": [...], "type"?: "background"|"normal"|"urgent", "expiration"?: UNIX seconds,
    /// "key"?: "<collapse id>", "payload": {...}}` as the job JSON (README "The job") that sends
    /// it with `app`'s APNs client: background → push_type background, priority 5; normal → alert,
    /// 5; urgent → alert, 10; `key` → `collapse_id`. The job is read back with the worker's own
    /// parser and APNs rules before it is returned, so a packet the worker would reject (a payload
    /// without `aps`, over 4,096 bytes) is refused here, naming the packet's member.
    public static func notificationJob(_ bytes: [UInt8], app: String, jobID: String) throws(PushdRefusal) -> [UInt8] {
        var parser = JSONParser(bytes, recordingRangeOf: "payload")
        let members = try object(bytes, members: notificationMembers, kind: "notification", parser: &parser)

        guard let groupsValue = members["groups"] else {
            throw PushdRefusal(field: "groups", "is required: the groups to notify, an array of names")
        }
        guard case let .array(groupValues) = groupsValue, !groupValues.isEmpty else {
            throw PushdRefusal(field: "groups", "must be a non-empty array of group names, got \(JobParser.rendered(groupsValue))")
        }
        guard groupValues.count <= JobParser.maxGroups else {
            throw PushdRefusal(field: "groups", "names \(groupValues.count) groups; at most \(JobParser.maxGroups) are allowed")
        }
        var groups = [String]()
        groups.reserveCapacity(groupValues.count)
        for (index, value) in groupValues.enumerated() {
            guard case let .string(name) = value else {
                throw PushdRefusal(field: "groups[\(index)]", "must be a string, got \(value.typeName)")
            }
            try checkGroup(name, field: "groups[\(index)]")
            groups.append(name)
        }

        let type = try notificationType(members["type"])
        let expiration = try expiration(members["expiration"])
        let key = try collapseKey(members["key"])

        guard let payloadValue = members["payload"] else {
            throw PushdRefusal(field: "payload", "is required: the APNs payload dictionary, e.g. {\"aps\":{\"alert\":\"Hello\"}}")
        }
        guard case .object = payloadValue, let payloadRange = parser.recordedRange else {
            throw PushdRefusal(field: "payload", "must be a JSON object (the APNs payload dictionary), got \(payloadValue.typeName)")
        }

        var writer = JSONWriter(capacity: payloadRange.count + 256)
        writer.field("id", jobID)
        writer.field("app", app)
        writer.field("groups", strings: groups)
        writer.field("push_type", type.pushType)
        writer.field("priority", type.priority)
        writer.field("expiration", expiration)
        if let key { writer.field("collapse_id", key) }
        writer.field("payload", rawJSON: Array(bytes[payloadRange]))
        let job = writer.finish()
        try checkAsWorker(job)
        return job
    }

    // MARK: members

    /// pushd's `type`; absent or null: background.
    private static func notificationType(_ value: JSONValue?) throws(PushdRefusal) -> PushdNotificationType {
        guard let value, value != .null else { return .background }
        let names = PushdNotificationType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard case let .string(text) = value, let type = PushdNotificationType(rawValue: text) else {
            throw PushdRefusal(field: "type", "must be one of \(names), got \(JobParser.rendered(value))")
        }
        return type
    }

    /// UNIX seconds; 0 (the default) = APNs tries once.
    private static func expiration(_ value: JSONValue?) throws(PushdRefusal) -> Int {
        guard let value, value != .null else { return 0 }
        guard let seconds = value.exactInteger, seconds >= 0 else {
            throw PushdRefusal(field: "expiration", "must be UNIX seconds as an integer, 0 or more (0 = try once), got \(JobParser.rendered(value))")
        }
        return seconds
    }

    /// The collapse identifier, at most APNs' 64 bytes; an empty one is none.
    private static func collapseKey(_ value: JSONValue?) throws(PushdRefusal) -> String? {
        guard let value, value != .null else { return nil }
        guard case let .string(text) = value else {
            throw PushdRefusal(field: "key", "must be a string, got \(value.typeName)")
        }
        guard text.utf8.count <= APNsJobRules.maxCollapseIDLength else {
            throw PushdRefusal(field: "key", "is \(text.utf8.count) bytes; APNs allows at most \(APNsJobRules.maxCollapseIDLength)")
        }
        do { try JobParser.rejectControlCharacters(in: text, field: "key") } catch { throw PushdRefusal(field: "key", error.problem) }
        return text.isEmpty ? nil : text
    }

    private static func string(_ members: [String: JSONValue], _ name: String) throws(PushdRefusal) -> String {
        guard let value = members[name] else { throw PushdRefusal(field: name, "is required") }
        guard case let .string(text) = value else {
            throw PushdRefusal(field: name, "must be a string, got \(value.typeName)")
        }
        return text
    }

    /// The rule a job's `groups` are read with (`JobParser`): 1–255 bytes, no white space or
    /// control characters. Registrations are held to it too, so every group a device can join can
    /// be notified.
    private static func checkGroup(_ name: String, field: String) throws(PushdRefusal) {
        guard name.utf8.count <= JobParser.maxGroupNameLength else {
            throw PushdRefusal(field: field, "is \(name.utf8.count) bytes; at most \(JobParser.maxGroupNameLength) allowed")
        }
        do { try JobParser.rejectControlCharacters(in: name, field: field) } catch { throw PushdRefusal(field: field, error.problem) }
        guard !name.isEmpty, !name.contains(where: \.isWhitespace) else {
            throw PushdRefusal(field: field, "must be 1–\(JobParser.maxGroupNameLength) bytes without spaces")
        }
    }

    // MARK: the packet

    private static func object(_ bytes: [UInt8], members: [String], kind: String) throws(PushdRefusal) -> [String: JSONValue] {
        var parser = JSONParser(bytes)
        return try object(bytes, members: members, kind: kind, parser: &parser)
    }

    /// The packet's members (the last of a repeated one, as `JSONParser` records ranges), refusing
    /// an oversized packet, anything but one JSON object, and members pushd does not know.
    private static func object(_ bytes: [UInt8], members allowed: [String], kind: String, parser: inout JSONParser) throws(PushdRefusal) -> [String: JSONValue] {
        guard bytes.count <= maxPacketBytes else {
            throw PushdRefusal(field: nil, "the packet is \(bytes.count) bytes; a UDP datagram holds at most \(maxPacketBytes)")
        }
        let document: JSONParser.TopLevel
        do { document = try parser.parseTopLevel() } catch {
            throw PushdRefusal(field: nil, "the packet is not valid JSON (\(error.problem.prefix(160)) at byte \(error.offset))")
        }
        let list: [(key: String, value: JSONValue)]
        switch document {
        case let .members(members): list = members
        case let .value(value): throw PushdRefusal(field: nil, "a \(kind) packet must be a JSON object, got \(value.typeName)")
        }
        var members = [String: JSONValue]()
        for (key, value) in list {
            guard allowed.contains(key) else {
                let shown = JobParser.rendered(.string(key))
                throw PushdRefusal(field: String(shown.dropFirst().dropLast()), "unknown member (a \(kind) packet has \(allowed.joined(separator: ", ")))")
            }
            members[key] = value
        }
        return members
    }

    /// Reads the job back as the worker will, and names the packet's member when it would be rejected.
    private static func checkAsWorker(_ job: [UInt8]) throws(PushdRefusal) {
        do {
            _ = try JobParser.apns.parse(job, messageID: nil, now: 0, makeID: { "" })
        } catch {
            throw PushdRefusal(field: error.field.map(packetField), error.problem)
        }
    }

    /// A job field's name as the packet calls it.
    private static func packetField(_ jobField: String) -> String {
        switch jobField {
        case "push_type", "priority": "type"
        case "collapse_id": "key"
        default: jobField
        }
    }
}
