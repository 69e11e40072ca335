import PushCore

/// One event from the results exchange (README "Events"): the fields applications act on, and
/// the whole body for the rest.
public struct PushworkerEvent: Sendable, Hashable {
    /// `token.invalid`, `delivery.failed`, `job.rejected`, `job.completed`, `group.missing`.
    public let routingKey: String
    public let jobID: PushworkerJobID?
    public let app: String?
    /// RFC 3339, as the worker wrote it.
    public let time: String?

    /// The device, as the job or group named it (`token.invalid`, `delivery.failed`).
    public let token: String?
    public let reason: String?
    /// The platform's HTTP status (0: no answer, or not a device of the platform).
    public let status: Int?
    public let attempts: Int?
    /// The platform's id of the message (APNs' apns-id, FCM's message name, a Web Push Location).
    public let messageID: String?

    /// `job.completed` counts.
    public let devices: Int?
    public let sent: Int?
    public let failed: Int?
    public let invalid: Int?
    public let retried: Int?
    /// Chunk jobs a large job was split into (each reports its own `job.completed`).
    public let chunks: Int?

    /// `job.rejected`: what is wrong, and the field at fault.
    public let error: String?
    public let field: String?

    /// The event's JSON as published (`.null` if it was not JSON).
    public let json: JSONValue
    public let body: [UInt8]

    public init(routingKey: String, body: [UInt8]) {
        self.routingKey = routingKey
        self.body = body
        json = (try? JSONValue.parse(body)) ?? .null
        let members: [String: JSONValue] = if case .object(let members) = json { members } else { [:] }
        func string(_ key: String) -> String? {
            if case .string(let text)? = members[key] { text } else { nil }
        }
        func integer(_ key: String) -> Int? { members[key]?.exactInteger }
        jobID = string("job_id").map(PushworkerJobID.init)
        app = string("app")
        time = string("time")
        token = string("token")
        reason = string("reason")
        status = integer("status")
        attempts = integer("attempts")
        messageID = string("message_id")
        devices = integer("devices")
        sent = integer("sent")
        failed = integer("failed")
        invalid = integer("invalid")
        retried = integer("retried")
        chunks = integer("chunks")
        error = string("error")
        field = string("field")
    }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// `job.completed` or `job.rejected`: the worker is done with this job (or this chunk or
    /// retry round of it: `retried` and `chunks` say whether more will come).
    public var endsJob: Bool { routingKey == "job.completed" || routingKey == "job.rejected" }
}
