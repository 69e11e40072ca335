import PushCore

/// A job's APNs fields (README "The job"): what becomes the `apns-push-type`, `apns-priority`,
/// `apns-collapse-id` and `apns-topic` headers of its requests.
public struct APNsJobOptions: PlatformOptions, Hashable {
    public var platformName: String { "apns" }
    public var pushType: APNsPushType
    /// 10, 5 or 1.
    public var priority: Int
    public var collapseID: String?
    /// The bundle ID the job chose; nil: the app's configured topic.
    public var topic: String?
    /// The push type's rule the job breaks, where the app sends such jobs anyway (`push_type_rules: warn`).
    public var ruleWarning: String?
    /// A broadcast's channel (`channel`): the job goes to `/4/broadcasts/apps/<bundle ID>` once.
    public var channel: String?

    public init(pushType: APNsPushType = .alert, priority: Int = 10, collapseID: String? = nil, topic: String? = nil) {
        self.pushType = pushType
        self.priority = priority
        self.collapseID = collapseID
        self.topic = topic
    }

    public func write(into writer: inout JSONWriter) {
        writer.field("push_type", pushType.rawValue)
        writer.field("priority", priority)
        if let collapseID { writer.field("collapse_id", collapseID) }
        if let topic { writer.field("topic", topic) }
        if let channel { writer.field("channel", channel) }
    }
}

extension PushJob {
    /// The job's APNs fields. Every job is an APNs job until another platform arrives; one that
    /// is not reaching APNs code is a wiring mistake, not bad input.
    public var apns: APNsJobOptions {
        guard let options = options as? APNsJobOptions else {
            preconditionFailure("job \(id) carries \(type(of: options)), not APNs options")
        }
        return options
    }

    /// An APNs job; the parameters are the job fields of the same names.
    public init(id: String, app: String = "default", tokens: [DeviceToken], groups: [String] = [],
                pushType: APNsPushType = .alert, priority: Int = 10, expiration: Int = 0,
                collapseID: String? = nil, topic: String? = nil, payload: [UInt8], attempts: Int = 0, chunk: Int? = nil) {
        self.init(id: id, app: app, tokens: tokens, groups: groups, expiration: expiration,
                  options: APNsJobOptions(pushType: pushType, priority: priority, collapseID: collapseID, topic: topic),
                  payload: payload, attempts: attempts, chunk: chunk)
    }
}
