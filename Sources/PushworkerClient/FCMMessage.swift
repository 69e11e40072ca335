import PushCore

/// An FCM HTTP v1 `message` without its target: the worker adds each device's `token`.
///
/// Android's `priority`, `ttl` and `collapse_key` come from the job's `priority`, `expiration`
/// and `collapseID` (README "FCM jobs"); the worker refuses a job that gives one in both places,
/// and so does `PushworkerJob.json()`.
public struct FCMMessage: Sendable, Hashable {
    public var notification: Notification?
    /// FCM's data values are strings.
    public var data: [String: String]
    /// The raw `AndroidConfig` object (`notification`, `direct_boot_ok`, …).
    public var android: [String: JSONValue]?
    /// The raw `ApnsConfig` object FCM forwards to Apple devices.
    public var apns: [String: JSONValue]?
    /// The raw `WebpushConfig` object.
    public var webpush: [String: JSONValue]?
    /// The raw `FcmOptions` object (`analytics_label`).
    public var fcmOptions: [String: JSONValue]?

    public init(notification: Notification? = nil, data: [String: String] = [:], android: [String: JSONValue]? = nil,
                apns: [String: JSONValue]? = nil, webpush: [String: JSONValue]? = nil, fcmOptions: [String: JSONValue]? = nil) {
        self.notification = notification
        self.data = data
        self.android = android
        self.apns = apns
        self.webpush = webpush
        self.fcmOptions = fcmOptions
    }

    /// The message's `notification`, shown by the system when the app is in the background.
    public struct Notification: Sendable, Hashable {
        public var title: String?
        public var body: String?
        /// An https URL of an image.
        public var image: String?

        public init(title: String? = nil, body: String? = nil, image: String? = nil) {
            self.title = title
            self.body = body
            self.image = image
        }
    }

    func jsonObject(jobPriority: PushworkerJob.Priority?, jobCollapseID: String?, jobExpiration: PushworkerJob.Expiration?) throws(PushworkerJobError) -> JSONObjectWriter {
        if let android {
            for (key, given) in [("priority", jobPriority != nil), ("collapse_key", jobCollapseID != nil), ("ttl", jobExpiration != nil)]
            where given && android[key] != nil {
                throw PushworkerJobError(field: "payload.android.\(key)", "is also given by the job's own field; give it in one place (the job's field is the one that works on every platform)")
            }
        }
        var writer = JSONObjectWriter()
        if let notification {
            var members = JSONObjectWriter()
            if let title = notification.title { members.member("title", title) }
            if let body = notification.body { members.member("body", body) }
            if let image = notification.image { members.member("image", image) }
            writer.member("notification", object: members)
        }
        if !data.isEmpty { writer.member("data", .object(data.mapValues(JSONValue.string))) }
        if let android { writer.member("android", .object(android)) }
        if let apns { writer.member("apns", .object(apns)) }
        if let webpush { writer.member("webpush", .object(webpush)) }
        if let fcmOptions { writer.member("fcm_options", .object(fcmOptions)) }
        return writer
    }
}
