import NIOCore
import PushCore

/// One answer of the FCM mode, whatever the HTTP version it goes out on.
struct FCMSandboxHTTPAnswer: Sendable, Equatable {
    var status: Int
    var headers: [(name: String, value: String)] = []
    var body: String

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// What a request of the FCM mode gets: an answer at once (token endpoint, control requests, an
/// unknown path), or a `messages:send` verdict that goes through the recorder first (rules,
/// faults, the record), like an APNs notification.
enum FCMSandboxReply {
    case answer(FCMSandboxHTTPAnswer)
    /// `problem`: why the sandbox refused the message itself (nil when it passed).
    case message(SandboxDraft, problem: FCMSandboxProblem?)
}

/// A message the sandbox refuses as FCM would: the text of `error.message`, and the field of a
/// google.rpc.BadRequest violation when FCM names one.
struct FCMSandboxProblem: Sendable, Equatable {
    var message: String
    var field: String?
}

/// Routes the FCM mode's requests: `POST <token path>` (the OAuth token endpoint),
/// `POST /v1/projects/<project>/messages:send`, `/_sandbox/fcm/…` and the shared `/_sandbox/…`
/// control requests.
///   POST /_sandbox/fcm/expire-tokens   every issued access token expires now
///   POST /_sandbox/fcm/revoke          the service account is revoked: tokens refused, none issued
///   POST /_sandbox/fcm/restore         undoes revoke
struct FCMSandboxResponder: Sendable {
    static let controlPrefix = "/_sandbox/fcm/"

    let projectID: String
    let tokenPath: String
    let credentials: FCMSandboxCredentials
    let recorder: SandboxRecorder
    let retryAfterSeconds: Int
    /// The token endpoint's clock minus this machine's (`FCMSandboxConfiguration.clockOffset`).
    var clockOffsetSeconds = 0

    func reply(method: String, path: String, authorization: String?, body: [UInt8], connectionID: Int,
               uuids: inout SandboxUUIDGenerator) -> FCMSandboxReply {
        let route = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        if route.hasPrefix(Self.controlPrefix) { return .answer(self.control(method: method, route: route)) }
        if route.hasPrefix(SandboxControl.prefix) {
            let buffer = ByteBuffer(bytes: body)
            let answer = SandboxControl.answer(method: method, path: path, body: buffer, recorder: self.recorder)
            return .answer(FCMSandboxHTTPAnswer(status: answer.status, headers: [("content-type", "application/json")], body: answer.json))
        }
        if route == self.tokenPath {
            guard method == "POST" else { return .answer(Self.rpcError(405, "Method Not Allowed", status: nil)) }
            // Google's endpoint judges the assertion's time by its own clock, and says which in `Date`.
            let endpointSeconds = SandboxWallClock.epochSeconds() + self.clockOffsetSeconds
            let grant = self.credentials.grant(formBody: body, epochSeconds: endpointSeconds, now: .now)
            return .answer(FCMSandboxHTTPAnswer(status: grant.status, headers: [
                ("content-type", "application/json; charset=utf-8"), ("date", SandboxWallClock.httpDate(epochSeconds: endpointSeconds)),
            ], body: grant.json))
        }
        guard route.hasPrefix("/v1/projects/"), route.hasSuffix("/messages:send") else {
            return .answer(Self.rpcError(404, "The requested URL \(route.prefix(100)) was not found on this server.", status: "NOT_FOUND"))
        }
        var draft = SandboxDraft()
        draft.connectionID = connectionID
        draft.receivedAt = .now
        draft.pushType = "fcm"
        draft.payload = body
        draft.topic = String(route.dropFirst("/v1/projects/".count).dropLast("/messages:send".count))
        func refuse(_ status: Int, _ reason: String, _ message: String, field: String? = nil) -> FCMSandboxReply {
            draft.status = status
            draft.reason = reason
            return .message(draft, problem: FCMSandboxProblem(message: message, field: field))
        }
        guard method == "POST" else { return refuse(405, "METHOD_NOT_ALLOWED", "messages:send takes POST") }
        switch self.credentials.check(authorization: authorization, now: .now) {
        case let .refused(message):
            return refuse(401, "UNAUTHENTICATED", message)
        case let .valid(token):
            draft.providerToken = token
            draft.authentication = "bearer:\(self.credentials.clientEmail)"
        }
        guard draft.topic == self.projectID else {
            // Google's answer for a project the account may not send to.
            return refuse(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(draft.topic.prefix(64))' (or it may not exist).")
        }
        do throws(FCMSandboxRefusal) {
            let message = try FCMSandboxMessageValidator.validate(body)
            draft.token = message.target
            draft.priority = message.priority
            draft.expiration = message.ttlSeconds
            draft.collapseID = message.collapseKey
        } catch {
            draft.token = error.target ?? ""
            return refuse(400, "INVALID_ARGUMENT", error.problem.message, field: error.problem.field)
        }
        draft.apnsID = "projects/\(self.projectID)/messages/0:\(SandboxWallClock.epochMilliseconds())%\(uuids.next().replacingOccurrences(of: "-", with: "").prefix(16))"
        return .message(draft, problem: nil)
    }

    /// The answer to a message once the recorder decided `status` and `reason` (a rule may have
    /// replaced the sandbox's own verdict, whose `problem` then no longer applies).
    func messageAnswer(status: Int, reason: String?, draft: SandboxDraft, problem: FCMSandboxProblem?) -> FCMSandboxHTTPAnswer {
        if status == 200 {
            return FCMSandboxHTTPAnswer(status: 200, headers: [("content-type", "application/json; charset=UTF-8")], body: "{\"name\":\(FCMSandboxJSON.quoted(draft.apnsID))}")
        }
        let reason = reason ?? "UNSPECIFIED_ERROR"
        let ownVerdict = status == draft.status && reason == draft.reason ? problem : nil
        let known = Self.errors[reason]
        let message = ownVerdict?.message ?? known?.message ?? "Scripted error \(reason)."
        var details: [String] = []
        if known?.hasFCMError ?? true {
            details.append(#"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":\#(FCMSandboxJSON.quoted(reason))}"#)
        }
        if let field = ownVerdict?.field {
            details.append(#"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":\#(FCMSandboxJSON.quoted(field)),"description":\#(FCMSandboxJSON.quoted(message))}]}"#)
        }
        var answer = Self.rpcError(status, message, status: known?.rpcStatus ?? Self.rpcStatus(forHTTP: status), details: details)
        if status == 429 || status == 503 { answer.headers.append(("retry-after", String(self.retryAfterSeconds))) }
        return answer
    }

    private func control(method: String, route: String) -> FCMSandboxHTTPAnswer {
        switch (method, route) {
        case ("POST", Self.controlPrefix + "expire-tokens"): self.credentials.expireAll()
        case ("POST", Self.controlPrefix + "revoke"): self.credentials.setRevoked(true)
        case ("POST", Self.controlPrefix + "restore"): self.credentials.setRevoked(false)
        default:
            return FCMSandboxHTTPAnswer(status: 404, headers: [("content-type", "application/json")],
                                        body: "{\"error\":\(FCMSandboxJSON.quoted("unknown control request \(method) \(route.prefix(100)); see FCMSandboxResponder"))}")
        }
        return FCMSandboxHTTPAnswer(status: 200, headers: [("content-type", "application/json")], body: "{}")
    }

    /// FCM's errors as rules name them (a rule's `reason`): the google.rpc status, whether FCM adds
    /// an FcmError detail, and its message (Firebase, "ErrorCode"; the messages are Google's).
    static let errors: [String: (rpcStatus: String, hasFCMError: Bool, message: String)] = [
        "UNREGISTERED": ("NOT_FOUND", true, "Requested entity was not found."),
        "SENDER_ID_MISMATCH": ("PERMISSION_DENIED", true, "SenderId mismatch"),
        "QUOTA_EXCEEDED": ("RESOURCE_EXHAUSTED", true, "Quota exceeded for quota metric 'Send messages' and limit 'Send messages per minute'."),
        "UNAVAILABLE": ("UNAVAILABLE", true, "The service is currently unavailable."),
        "INTERNAL": ("INTERNAL", true, "Internal error encountered."),
        "INVALID_ARGUMENT": ("INVALID_ARGUMENT", true, "The registration token is not a valid FCM registration token"),
        "THIRD_PARTY_AUTH_ERROR": ("UNAUTHENTICATED", true, "Auth error from APNS or Web Push Service"),
        "UNSPECIFIED_ERROR": ("UNKNOWN", true, "Unknown error."),
        "UNAUTHENTICATED": ("UNAUTHENTICATED", false, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."),
        "PERMISSION_DENIED": ("PERMISSION_DENIED", false, "Permission 'cloudmessaging.messages.create' denied."),
        "NOT_FOUND": ("NOT_FOUND", false, "Requested entity was not found."),
        "METHOD_NOT_ALLOWED": ("INVALID_ARGUMENT", false, "messages:send takes POST"),
    ]

    static func rpcStatus(forHTTP status: Int) -> String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 429: "RESOURCE_EXHAUSTED"
        case 503: "UNAVAILABLE"
        case 500...599: "INTERNAL"
        default: "UNKNOWN"
        }
    }

    /// `{"error":{"code","message","status","details"}}`, Google's error shape.
    static func rpcError(_ code: Int, _ message: String, status: String?, details: [String] = []) -> FCMSandboxHTTPAnswer {
        let statusMember = status.map { ",\"status\":\(FCMSandboxJSON.quoted($0))" } ?? ""
        let detailsMember = details.isEmpty ? "" : ",\"details\":[\(details.joined(separator: ","))]"
        return FCMSandboxHTTPAnswer(status: code, headers: [("content-type", "application/json; charset=UTF-8")],
                                    body: "{\"error\":{\"code\":\(code),\"message\":\(FCMSandboxJSON.quoted(message))\(statusMember)\(detailsMember)}}")
    }
}
