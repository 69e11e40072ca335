import HTTP2
import APNsCore
import PushCore

/// Turns a notification into the HTTP/2 request APNs expects (Apple, "Sending notification requests to APNs"). Per-request
/// values (`:path`, `apns-id`) are sent never-indexed so they don't churn the HPACK table; stable
/// ones (authorization, topic, push type) are indexed and shared by every device of a job.
struct APNsRequestBuilder: Sendable {
    let defaultTopic: String?

    func request(for notification: APNsNotification, authorization: String?) throws(APNsRequestProblem) -> HTTP2Request {
        try Self.checkPayload(of: notification)
        var headers = try sharedHeaders(for: notification.headerFields, authorization: authorization)
        if let apnsID = Self.apnsIDHeader(notification.apnsID) { headers.append(apnsID) }
        return HTTP2Request(method: "POST", path: Self.path(for: notification.token), headers: headers, body: notification.payload)
    }

    /// Apart from the headers: the payload is per job, the cached headers per kind of notification.
    static func checkPayload(of notification: APNsNotification) throws(APNsRequestProblem) {
        let pushType = notification.headerFields.pushType
        guard notification.payload.count <= pushType.maxPayloadBytes else {
            throw APNsRequestProblem(reason: APNsReason.payloadTooLarge.rawValue, "payload is \(notification.payload.count) bytes, the limit for \(pushType.rawValue) is \(pushType.maxPayloadBytes)")
        }
    }

    static func path(for token: DeviceToken) -> String {
        "/3/device/" + token.identity
    }

    /// The request's own id, never indexed: it differs on every request.
    static func apnsIDHeader(_ apnsID: String?) -> HTTP2Header? {
        apnsID.map { HTTP2Header(name: "apns-id", value: $0, neverIndex: true) }
    }

    /// Every header but `:path` and `apns-id`: the same for every device a job goes to. Made from
    /// `fields` alone, what `APNsHeaderCache` keys on.
    func sharedHeaders(for fields: APNsNotification.HeaderFields, authorization: String?) throws(APNsRequestProblem) -> [HTTP2Header] {
        guard let bundleTopic = fields.topic ?? defaultTopic else {
            throw APNsRequestProblem(reason: APNsReason.missingTopic.rawValue, "no topic: set --apns-topic or the job's \"topic\"")
        }
        if let collapseID = fields.collapseID, collapseID.utf8.count > 64 {
            throw APNsRequestProblem(reason: APNsReason.badCollapseId.rawValue, "collapse id longer than 64 bytes")
        }
        var headers = [HTTP2Header]()
        headers.reserveCapacity(7)
        if let authorization { headers.append(HTTP2Header(name: "authorization", value: authorization)) }
        headers.append(HTTP2Header(name: "apns-push-type", value: fields.pushType.rawValue))
        headers.append(HTTP2Header(name: "apns-topic", value: fields.pushType.topic(forBundleID: bundleTopic)))
        headers.append(HTTP2Header(name: "apns-priority", value: Self.priorityText(fields.priority)))
        headers.append(HTTP2Header(name: "apns-expiration", value: String(fields.expiration)))
        if let collapseID = fields.collapseID {
            headers.append(HTTP2Header(name: "apns-collapse-id", value: collapseID))
        }
        return headers
    }

    private static func priorityText(_ priority: Int) -> String {
        switch priority {
        case 10: "10"
        case 5: "5"
        case 1: "1"
        default: String(priority)
        }
    }
}

/// A notification we refuse to send because APNs would refuse it.
struct APNsRequestProblem: Error, Sendable {
    let reason: String
    let message: String
    init(reason: String, _ message: String) {
        self.reason = reason
        self.message = message
    }
}
