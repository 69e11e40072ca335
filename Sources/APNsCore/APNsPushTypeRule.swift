import PushCore

/// What Apple requires of each push type beyond its topic suffix (`APNsPushType.topicSuffix`): the
/// priorities it takes, what its `aps` dictionary must hold, and whether certificate connections
/// may send it. APNs may delay or drop a push that breaks these without any error, so a job is
/// checked before it is sent (docs/reference/push-types.md lists the rules and their sources).
public struct APNsPushTypeRule: Sendable {
    /// The `apns-priority` values this type takes.
    public let priorities: Set<Int>
    /// Only token (JWT) connections may send it.
    public let needsTokenAuthentication: Bool
    /// The problem with the job's `aps` (parsed), or nil; the field it names is under `payload.aps`.
    let apsProblem: @Sendable (_ aps: [String: JSONValue]) -> (field: String, problem: String)?
    /// Whether the check needs `aps` parsed (the common types need only its shape).
    let readsAPS: Bool

    init(priorities: Set<Int>, needsTokenAuthentication: Bool, readsAPS: Bool,
         apsProblem: @escaping @Sendable (_ aps: [String: JSONValue]) -> (field: String, problem: String)?) {
        self.priorities = priorities
        self.needsTokenAuthentication = needsTokenAuthentication
        self.readsAPS = readsAPS
        self.apsProblem = apsProblem
    }

    /// The problem with a request body's `aps` for this type, or nil: for a receiver that holds
    /// the body (the sandbox, which refuses what Apple may silently drop). A body that is not a
    /// JSON object is another check's; an `aps` that is absent or not an object holds nothing.
    public func problem(inPayload payload: [UInt8]) -> (field: String, problem: String)? {
        guard readsAPS, case let .object(members)? = try? JSONValue.parse(payload) else { return nil }
        guard case let .object(aps)? = members["aps"] else { return apsProblem([:]) }
        return apsProblem(aps)
    }

    public static func rule(for type: APNsPushType) -> APNsPushTypeRule {
        switch type {
        case .background:
            APNsPushTypeRule(priorities: [5, 1], needsTokenAuthentication: false, readsAPS: true) { aps in
                if aps["content-available"]?.exactInteger != 1 {
                    return ("payload.aps.content-available", "must be 1 for background pushes")
                }
                if let shown = ["alert", "sound", "badge"].first(where: { aps[$0] != nil }) {
                    return ("payload.aps.\(shown)", "is not allowed in a background push (it carries no user-visible content)")
                }
                return nil
            }
        case .controls, .widgets:
            APNsPushTypeRule(priorities: [10, 5, 1], needsTokenAuthentication: false, readsAPS: true) { aps in
                aps["content-changed"] == .bool(true) ? nil
                    : ("payload.aps.content-changed", "must be true for \(type.rawValue) pushes")
            }
        case .liveactivity:
            APNsPushTypeRule(priorities: [10, 5], needsTokenAuthentication: true, readsAPS: true) { aps in
                liveActivityProblem(aps)
            }
        case .location:
            APNsPushTypeRule(priorities: [10, 5, 1], needsTokenAuthentication: true, readsAPS: false) { _ in nil }
        default:
            APNsPushTypeRule(priorities: [10, 5, 1], needsTokenAuthentication: false, readsAPS: false) { _ in nil }
        }
    }

    /// ActivityKit's Live Activity payload: `event` start, update or end; `timestamp` in seconds;
    /// `content-state` for start and update; `attributes-type` and `attributes` for start.
    static func liveActivityProblem(_ aps: [String: JSONValue]) -> (field: String, problem: String)? {
        guard case let .string(event)? = aps["event"], ["start", "update", "end"].contains(event) else {
            return ("payload.aps.event", "must be \"start\", \"update\" or \"end\" for liveactivity pushes")
        }
        guard let timestamp = aps["timestamp"]?.exactInteger, timestamp > 0 else {
            return ("payload.aps.timestamp", "must be the UNIX time in seconds for liveactivity pushes")
        }
        if event != "end", !isObject(aps["content-state"]) {
            return ("payload.aps.content-state", "must be an object for a Live Activity \(event)")
        }
        if event == "start" {
            guard case let .string(type)? = aps["attributes-type"], !type.isEmpty else {
                return ("payload.aps.attributes-type", "must name the activity's attributes type for a Live Activity start")
            }
            if !isObject(aps["attributes"]) {
                return ("payload.aps.attributes", "must be an object for a Live Activity start")
            }
        }
        return nil
    }

    private static func isObject(_ value: JSONValue?) -> Bool {
        if case .object? = value { true } else { false }
    }
}
