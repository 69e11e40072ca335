import Foundation
import PushCore

/// One job for the worker, as README "The job" documents it: who (`devices`, `groups`), how
/// (`priority`, `expiration`, `collapseID`, `bulk`) and what (`platform`: the APNs payload, FCM
/// message or Web Push message). `json()` writes the body to publish.
///
/// The worker checks every field again when the job arrives (and answers a bad one with
/// `job.rejected`); the builders catch only what is cheap to catch here.
public struct PushworkerJob: Sendable, Hashable {
    /// Echoed as `job_id` in every event. A fresh lowercase UUID unless given.
    public var id: String
    /// Which configured app; nil leaves it to the worker (`default`).
    public var app: String?
    /// Explicit devices: tokens, or subscriptions for a Web Push app.
    public var devices: [PushworkerDevice]
    /// Redis groups (`group:<app>:<name>`), expanded by the worker.
    public var groups: [String]
    /// A campaign rather than a transactional push: it waits in the bulk lane.
    public var bulk: Bool
    public var priority: Priority?
    public var expiration: Expiration?
    /// APNs `apns-collapse-id`, FCM `android.collapse_key`, Web Push `Topic`.
    public var collapseID: String?
    /// Fields of your own; each name must start with `x-` (the worker ignores them).
    public var customFields: [String: JSONValue]
    /// The platform's payload and fields.
    public var platform: Platform
    /// When set, the job's `payload` is this object as it is, instead of the platform's builder
    /// (a payload made elsewhere); the platform still decides the job's own fields.
    public var rawPayload: [String: JSONValue]?

    /// The platform the job's app sends with, and what it sends.
    public enum Platform: Sendable, Hashable {
        /// `topic` overrides the app's bundle ID (push-type suffixes are added by the worker).
        case apns(APNsPayload, pushType: APNsPushType? = nil, topic: String? = nil)
        case fcm(FCMMessage)
        case webPush(WebPushMessage)
    }

    public init(id: String = Self.newID(), app: String? = nil, devices: [PushworkerDevice] = [], groups: [String] = [],
                bulk: Bool = false, priority: Priority? = nil, expiration: Expiration? = nil, collapseID: String? = nil,
                customFields: [String: JSONValue] = [:], platform: Platform, rawPayload: [String: JSONValue]? = nil) {
        self.id = id
        self.app = app
        self.devices = devices
        self.groups = groups
        self.bulk = bulk
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.customFields = customFields
        self.platform = platform
        self.rawPayload = rawPayload
    }

    /// An APNs job.
    public static func apns(_ payload: APNsPayload, app: String? = nil, tokens: [String] = [], groups: [String] = [],
                            pushType: APNsPushType? = nil, topic: String? = nil) -> PushworkerJob {
        PushworkerJob(app: app, devices: tokens.map(PushworkerDevice.token), groups: groups,
                      platform: .apns(payload, pushType: pushType, topic: topic))
    }

    /// An FCM job.
    public static func fcm(_ message: FCMMessage, app: String? = nil, tokens: [String] = [], groups: [String] = []) -> PushworkerJob {
        PushworkerJob(app: app, devices: tokens.map(PushworkerDevice.token), groups: groups, platform: .fcm(message))
    }

    /// A Web Push job.
    public static func webPush(_ message: WebPushMessage, app: String? = nil, subscriptions: [PushworkerDevice] = [],
                               groups: [String] = []) -> PushworkerJob {
        PushworkerJob(app: app, devices: subscriptions, groups: groups, platform: .webPush(message))
    }

    public static func newID() -> String {
        UUID().uuidString.lowercased()
    }

    public var jobID: PushworkerJobID { PushworkerJobID(id) }

    /// The job's JSON body, in the README's order of fields.
    public func json() throws(PushworkerJobError) -> [UInt8] {
        try check()
        var writer = JSONObjectWriter()
        writer.member("id", id)
        if let app { writer.member("app", app) }
        if !devices.isEmpty { writer.member("tokens", .array(devices.map(\.json))) }
        if !groups.isEmpty { writer.member("groups", strings: groups) }
        if bulk { writer.member("bulk", true) }
        if case .apns(_, let pushType?, _) = platform { writer.member("push_type", pushType.rawValue) }
        if let priority { writer.member("priority", priority.rawValue) }
        if let expiration { writer.member("expiration", expiration.json) }
        if let collapseID { writer.member("collapse_id", collapseID) }
        if case .apns(_, _, let topic?) = platform { writer.member("topic", topic) }
        writer.members(customFields)
        writer.member("payload", object: try payloadObject())
        return writer.finished()
    }

    private func payloadObject() throws(PushworkerJobError) -> JSONObjectWriter {
        if let rawPayload {
            var writer = JSONObjectWriter()
            writer.members(rawPayload)
            return writer
        }
        switch platform {
        case .apns(let payload, _, _): return try payload.jsonObject()
        case .fcm(let message): return try message.jsonObject(jobPriority: priority, jobCollapseID: collapseID, jobExpiration: expiration)
        case .webPush(let message): return message.jsonObject()
        }
    }

    /// Mistakes that would surely end in `job.rejected`, caught before publishing.
    private func check() throws(PushworkerJobError) {
        guard !id.isEmpty else { throw PushworkerJobError(field: "id", "is empty; leave the default (a fresh UUID) or give one") }
        guard !devices.isEmpty || !groups.isEmpty else {
            throw PushworkerJobError(field: "tokens", "the job names no devices: give at least one device or one group")
        }
        for name in customFields.keys.sorted() where !name.hasPrefix("x-") {
            throw PushworkerJobError(field: name, "custom fields must start with \"x-\" (the worker refuses other unknown fields)")
        }
        if let expiration { try expiration.check() }
        if case .webPush = platform { return }
        for (index, device) in devices.enumerated() {
            if case .subscription = device {
                throw PushworkerJobError(field: "tokens[\(index)]", "is a Web Push subscription; a \(platform.name) job's devices are token strings")
            }
        }
    }
}

extension PushworkerJob.Platform {
    /// As the configuration file names the platform.
    var name: String {
        switch self {
        case .apns: "apns"
        case .fcm: "fcm"
        case .webPush: "webpush"
        }
    }
}
