import PushCore

/// A job's Web Push fields: what becomes the `Urgency` and `Topic` headers of its requests
/// (RFC 8030 §5.3, §5.4). `TTL` comes from the shared `expiration`.
public struct WebPushJobOptions: PlatformOptions, Hashable {
    public var platformName: String { "webpush" }
    /// 10, 5 or 1, as for APNs; nil: no `Urgency` header (the push service's default, normal).
    public var priority: Int?
    /// From `collapse_id`: a newer message with the same topic replaces an undelivered one.
    public var topic: String?

    public init(priority: Int? = nil, topic: String? = nil) {
        self.priority = priority
        self.topic = topic
    }

    /// The `Urgency` header value: 10 → high, 5 → normal, 1 → low.
    public var urgency: String? {
        switch priority {
        case 10: "high"
        case 5: "normal"
        case 1: "low"
        default: nil
        }
    }

    public func write(into writer: inout JSONWriter) {
        if let priority { writer.field("priority", priority) }
        if let topic { writer.field("collapse_id", topic) }
    }
}

extension PushJob {
    /// The job's Web Push fields; reaching Web Push code with another platform's job is a wiring
    /// mistake, not bad input.
    public var webPush: WebPushJobOptions {
        guard let options = options as? WebPushJobOptions else {
            preconditionFailure("job \(id) carries \(type(of: options)), not Web Push options")
        }
        return options
    }
}
