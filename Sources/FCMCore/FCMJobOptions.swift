import PushCore

/// A job's FCM fields: what the worker adds to the message's `android` object (`priority`,
/// `collapse_key`; `ttl` comes from the shared `expiration`).
public struct FCMJobOptions: PlatformOptions, Hashable {
    public var platformName: String { "fcm" }
    /// 10, 5 or 1, as for APNs; nil: FCM's default (HIGH for notification messages, NORMAL for data).
    public var priority: Int?
    /// From `collapse_id`: a newer message with the same key replaces an undelivered one.
    public var collapseKey: String?

    public init(priority: Int? = nil, collapseKey: String? = nil) {
        self.priority = priority
        self.collapseKey = collapseKey
    }

    /// `android.priority`: 10 → HIGH, 5 and 1 → NORMAL (FCM has no lower Android priority).
    public var androidPriority: String? {
        switch priority {
        case 10: "HIGH"
        case 5, 1: "NORMAL"
        default: nil
        }
    }

    public func write(into writer: inout JSONWriter) {
        if let priority { writer.field("priority", priority) }
        if let collapseKey { writer.field("collapse_id", collapseKey) }
    }
}

extension PushJob {
    /// The job's FCM fields; reaching FCM code with another platform's job is a wiring mistake,
    /// not bad input.
    public var fcm: FCMJobOptions {
        guard let options = options as? FCMJobOptions else {
            preconditionFailure("job \(id) carries \(type(of: options)), not FCM options")
        }
        return options
    }
}
