/// Reads a job message body (README "The job") into a `PushJob`, checking every field. The
/// fields every job has are read here; the platform's own ones by its `PlatformJobRules`, chosen by
/// the job's app (a worker may serve APNs, FCM and Web Push apps at once).
public struct JobParser: Sendable {
    /// The fields of every job, whatever its platform.
    static let sharedFields: [String] = ["id", "app", "tokens", "groups", "source_groups", "bulk", "expiration", "payload", "attempts", "chunk", "outage_waits"]
    public static let maxIDLength = 200
    public static let maxAppLength = 64
    public static let maxGroupNameLength = 255
    /// Groups one job may name: each is a Redis round trip, and thousands are a publisher's mistake.
    public static let maxGroups = 1000

    /// The platforms this parser knows, the first one the default (`parse` without an app table).
    public let platforms: [any PlatformJobRules]
    /// Every field a job may have (anything else is most likely a typo the publisher wants to hear
    /// about): the shared ones, then each platform's. Each job asks a dozen names against them.
    let fieldOrder: LengthFirstNames
    /// Per platform, which of `fieldOrder`'s names its jobs may carry; empty with one platform,
    /// where every known field is the platform's.
    let platformFields: [[Bool]]

    /// The rules of the first platform.
    public var rules: any PlatformJobRules { platforms[0] }

    public init(rules: any PlatformJobRules) {
        self.init(platforms: [rules])
    }

    public init(platforms: [any PlatformJobRules]) {
        precondition(!platforms.isEmpty, "a job parser needs at least one platform")
        self.platforms = platforms
        var names = LengthFirstNames(Self.sharedFields)
        for rules in platforms {
            for name in rules.fieldNames where names.index(of: name) == nil { names.append(name) }
        }
        fieldOrder = names
        platformFields = platforms.count == 1 ? [] : platforms.map { rules in
            names.names.map { Self.sharedFields.contains($0) || rules.fieldNames.contains($0) }
        }
    }

    /// Reads a job of the first platform, whatever its app.
    public func parse(_ body: [UInt8], messageID: String?, now: Int, makeID: () -> String) throws(JobRejection) -> PushJob {
        try parse(body, messageID: messageID, now: now, makeID: makeID) { (_: String) throws(JobRejection) in platforms[0] }
    }

    /// - Parameters:
    ///   - messageID: the AMQP message-id, used when the body has no `id`.
    ///   - now: UNIX seconds, for relative expirations.
    ///   - rulesForApp: the rules of the job's app's platform, or a rejection of the app (unknown).
    public func parse(_ body: [UInt8], messageID: String?, now: Int, makeID: () -> String,
                      rulesForApp: (String) throws(JobRejection) -> any PlatformJobRules) throws(JobRejection) -> PushJob {
        // The payload is checked but not built: the platform's rules read it by member (PayloadObject).
        var json = JSONParser(body, recordingRangeOf: "payload", buildsRecordedMember: false)
        let document: JSONParser.TopLevel
        do {
            document = try json.parseTopLevel()
        } catch {
            // The syntax error may quote a member name: cut, so the rejection stays small.
            throw JobRejection(field: nil, "the message is not valid JSON (\(Self.shown(error.problem, maxBytes: 160)) at byte \(error.offset))")
        }
        let object: JobFields
        switch document {
        case let .members(members): object = JobFields(members, fieldOrder: fieldOrder)
        case let .value(value): throw JobRejection(field: nil, "the message must be a JSON object, got \(value.typeName)")
        }
        if let key = object.firstUnknownKey {
            throw unknownField(key)
        }

        let id = try object.string("id", maxBytes: Self.maxIDLength).flatMap { $0.isEmpty ? nil : $0 } ?? messageID.flatMap { $0.isEmpty ? nil : $0 } ?? makeID()
        let app = try object.string("app", maxBytes: Self.maxAppLength) ?? "default"
        guard Self.isName(app) else {
            throw JobRejection(field: "app", "must be 1–\(Self.maxAppLength) characters of A–Z, a–z, 0–9, '.', '_' or '-'")
        }
        let rules = try rulesForApp(app)
        if !platformFields.isEmpty { try rejectOtherPlatformsFields(object, rules: rules, app: app) }
        var tokens = try parseTokens(object["tokens"], rules: rules)
        let groups = try parseGroups(object["groups"], field: "groups")
        let sourceGroups = try parseGroups(object["source_groups"], field: "source_groups")
        // Exactly one audience: devices (tokens, groups) or a broadcast channel.
        if let channel = try rules.channel(from: object) {
            guard tokens.isEmpty, groups.isEmpty, sourceGroups.isEmpty else {
                throw JobRejection(field: "channel", "a broadcast reaches the channel's subscribers: give \"channel\" or devices (\"tokens\", \"groups\"), not both")
            }
            tokens = [DeviceToken(identity: channel, given: channel)]
        } else if tokens.isEmpty, groups.isEmpty {
            let orChannel = rules.fieldNames.contains("channel") ? ", or a \"channel\" to broadcast to" : ""
            throw JobRejection(field: "tokens", "the job names no devices: give at least one token in \"tokens\" or one group in \"groups\"\(orChannel)")
        }

        let payloadBytes: [UInt8]
        if let built = try rules.payload(from: object, now: now) {
            payloadBytes = built
        } else {
            guard let payloadValue = object["payload"] else {
                throw JobRejection(field: "payload", "is required: \(rules.payloadDescription)")
            }
            guard case .object = payloadValue else {
                throw JobRejection(field: "payload", "must be a JSON object, got \(payloadValue.typeName)")
            }
            guard let payloadRange = json.recordedRange else {
                throw JobRejection(field: "payload", "cannot be read")
            }
            payloadBytes = RawJSON.compact(body[payloadRange])
        }
        let options = try rules.options(from: object, payload: PayloadObject(bytes: payloadBytes))

        let expiration = try parseExpiration(object["expiration"], now: now)
        let attempts = try object.integer("attempts", range: 0...1000) ?? 0
        let chunk = try object.integer("chunk", range: 0...Int(Int32.max))
        let outageWaits = try object.integer("outage_waits", range: 0...1000) ?? 0
        let bulk = try object.boolean("bulk") ?? false

        return PushJob(id: id, app: app, tokens: tokens, groups: groups, sourceGroups: sourceGroups, bulk: bulk, expiration: expiration, options: options,
                       payload: payloadBytes, attempts: attempts, chunk: chunk, outageWaits: outageWaits)
    }

    /// A field another platform reads (an APNs `push_type` in a Web Push job) would be ignored:
    /// refused instead, saying whose field it is.
    private func rejectOtherPlatformsFields(_ object: JobFields, rules: any PlatformJobRules, app: String) throws(JobRejection) {
        guard let index = platforms.firstIndex(where: { $0.platformName == rules.platformName }) else { return }
        guard let name = object.firstPresentName(outside: platformFields[index]) else { return }
        let owners = platforms.filter { $0.fieldNames.contains(name) }.map(\.platformName).joined(separator: " and ")
        let own = (Self.sharedFields + rules.fieldNames).sorted().joined(separator: ", ")
        throw JobRejection(field: name, "is a field of \(owners) jobs; app \"\(app)\" sends with \(rules.platformName), whose jobs have: \(own) (and x- fields of your own)")
    }

    private func parseTokens(_ value: JSONValue?, rules: any PlatformJobRules) throws(JobRejection) -> [DeviceToken] {
        guard let value, value != .null else { return [] }
        guard case let .array(array) = value else {
            throw JobRejection(field: "tokens", "must be an array of devices, got \(value.typeName)")
        }
        var tokens = [DeviceToken]()
        tokens.reserveCapacity(array.count)
        var seen = Set<String>()
        if array.count > 1 { seen.reserveCapacity(array.count) }
        for (index, element) in array.enumerated() {
            let token: DeviceToken
            do { token = try rules.device(from: element) } catch {
                throw JobRejection(field: "tokens[\(index)]" + (error.member.map { "." + $0 } ?? ""), error.problem)
            }
            // A device named twice gets one notification.
            if array.count == 1 || seen.insert(token.identity).inserted { tokens.append(token) }
        }
        return tokens
    }

    private func parseGroups(_ value: JSONValue?, field: String) throws(JobRejection) -> [String] {
        guard let value, value != .null else { return [] }
        guard case let .array(array) = value else {
            throw JobRejection(field: field, "must be an array of group names, got \(value.typeName)")
        }
        guard array.count <= Self.maxGroups else {
            throw JobRejection(field: field, "names \(array.count) groups; at most \(Self.maxGroups) are allowed in one job")
        }
        var groups = [String]()
        groups.reserveCapacity(array.count)
        var seen = Set<GroupName>()
        if array.count > 1 { seen.reserveCapacity(array.count) }
        for (index, element) in array.enumerated() {
            guard case let .string(name) = element else {
                throw JobRejection(field: "\(field)[\(index)]", "must be a string, got \(element.typeName)")
            }
            guard name.utf8.count <= Self.maxGroupNameLength else {
                throw JobRejection(field: "\(field)[\(index)]", "is \(name.utf8.count) bytes; at most \(Self.maxGroupNameLength) allowed")
            }
            try Self.rejectControlCharacters(in: name, field: "\(field)[\(index)]")
            guard !name.isEmpty, !name.contains(where: \.isWhitespace) else {
                throw JobRejection(field: "\(field)[\(index)]", "must be 1–\(Self.maxGroupNameLength) bytes without spaces")
            }
            // A group named twice is expanded once.
            if array.count == 1 || seen.insert(GroupName(name)).inserted { groups.append(name) }
        }
        return groups
    }

    private func parseExpiration(_ value: JSONValue?, now: Int) throws(JobRejection) -> Int {
        guard let value, value != .null else { return 0 }
        if case let .string(text) = value {
            guard text.hasPrefix("+"), let seconds = Int(text.dropFirst()), seconds >= 0, seconds <= 366 * 86400 else {
                throw JobRejection(field: "expiration", "a string must be \"+N\": N seconds from now (at most a year), got \(Self.rendered(value))")
            }
            return now + seconds
        }
        guard let seconds = value.exactInteger, seconds >= 0 else {
            throw JobRejection(field: "expiration", "must be UNIX seconds (0 = try once) or \"+N\" seconds from now, got \(Self.rendered(value))")
        }
        return seconds
    }

    /// The rule for a job's `app` (and a group's name): what the configuration file checks app names with.
    /// Over the string's own storage: `utf8.allSatisfy` stepped a String index per byte (measured:
    /// docs/evidence/code-measurements.md#app-name-check).
    public static func isName(_ text: String) -> Bool {
        let utf8 = text.utf8.span
        for index in utf8.indices where !isNameByte(utf8[index]) { return false }
        return !utf8.isEmpty
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}

/// A job's top-level members by name, and the readers every field goes through. The last of a
/// repeated member counts, as with a dictionary.
public struct JobFields {
    private let fieldOrder: LengthFirstNames
    private var known: [JSONValue?]
    /// The alphabetically first member that is neither known nor `x-`: errors name the same one every time.
    private(set) var firstUnknownKey: String?

    init(_ members: [(key: String, value: JSONValue)], fieldOrder: LengthFirstNames) {
        self.fieldOrder = fieldOrder
        known = Array(repeating: nil, count: fieldOrder.names.count)
        for (key, value) in members {
            if let slot = fieldOrder.index(of: key) {
                known[slot] = value
            } else if !key.hasPrefix("x-"), firstUnknownKey.map({ key < $0 }) ?? true {
                firstUnknownKey = key
            }
        }
    }

    /// The alphabetically first member present whose slot `allowed` says no to.
    func firstPresentName(outside allowed: [Bool]) -> String? {
        var first: String?
        for (slot, value) in known.enumerated() where value != nil && !allowed[slot] {
            let name = fieldOrder.names[slot]
            if first.map({ name < $0 }) ?? true { first = name }
        }
        return first
    }

    public subscript(_ key: String) -> JSONValue? {
        guard let slot = fieldOrder.index(of: key) else { return nil }
        return known[slot]
    }

    /// A string member of at most `maxBytes` bytes without control characters; nil when absent or null.
    public func string(_ key: String, maxBytes: Int) throws(JobRejection) -> String? {
        guard let value = self[key], value != .null else { return nil }
        guard case let .string(text) = value else {
            throw JobRejection(field: key, "must be a string, got \(value.typeName)")
        }
        guard text.utf8.count <= maxBytes else {
            throw JobRejection(field: key, "is \(text.utf8.count) bytes; at most \(maxBytes) allowed")
        }
        try JobParser.rejectControlCharacters(in: text, field: key)
        return text
    }

    /// An integer member in `range` (JSON 1.0 counts, "1" and true do not); nil when absent or null.
    public func integer(_ key: String, range: ClosedRange<Int>) throws(JobRejection) -> Int? {
        guard let value = self[key], value != .null else { return nil }
        guard let number = value.exactInteger, range.contains(number) else {
            throw JobRejection(field: key, "must be an integer in \(range.lowerBound)…\(range.upperBound), got \(JobParser.rendered(value))")
        }
        return number
    }

    /// A boolean member; nil when absent or null.
    public func boolean(_ key: String) throws(JobRejection) -> Bool? {
        guard let value = self[key], value != .null else { return nil }
        guard case let .bool(flag) = value else {
            throw JobRejection(field: key, "must be true or false, got \(JobParser.rendered(value))")
        }
        return flag
    }
}
