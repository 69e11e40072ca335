import PushCore

/// What one FCM HTTP v1 answer means for the device it was sent to (Firebase, "FCM error codes"
/// and the v1 `ErrorCode` reference): the reason (the `FcmError` code, else the google.rpc
/// `status`), the outcome, how long to wait before trying the device again, and whether the limit
/// hit was the device's own. The `FcmError` detail is read first; an answer this does not know falls
/// back on its status class, so no device is silently dropped.
public struct FCMAnswer: Sendable, Hashable {
    /// Google's advice for a project or topic quota: wait at least a minute before trying again.
    public static let minimumQuotaDelay: Duration = .seconds(60)
    /// The `@type` of the details FCM adds to an error.
    public static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    public static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"
    public static let quotaFailureType = "type.googleapis.com/google.rpc.QuotaFailure"

    public let status: Int
    /// `errorCode` of the FcmError detail, else `error.status`, else "HTTP <status>"; nil when sent.
    public let reason: String?
    public let outcome: DeliveryOutcome
    /// The least wait before this device is tried again (nil: the worker's own backoff).
    public let retryAfter: Duration?
    /// A QUOTA_EXCEEDED for this device alone: back off the device, not the whole project.
    public let isDeviceQuota: Bool
    /// The message's `name` (`projects/<project>/messages/<id>`) when FCM accepted it.
    public let messageName: String?

    /// - Parameters:
    ///   - retryAfterHeader: the `Retry-After` header's value, if any.
    ///   - now: UNIX seconds, for a `Retry-After` that is a date.
    public init(status: Int, body: [UInt8], retryAfterHeader: String?, now: Int) {
        let retryAfterValue = retryAfterHeader.flatMap { RetryAfter.delay($0, now: now) }
        if (200...299).contains(status) {
            var name: String?
            if case let .object(object)? = try? JSONValue.parse(body), case let .string(text)? = object["name"] { name = text }
            self.init(status: status, reason: nil, outcome: .sent, retryAfter: nil, isDeviceQuota: false, messageName: name)
            return
        }
        let error = FCMErrorBody(body)
        let code = error.errorCode.map(FCMErrorCode.init(rawValue:))
        let reason = error.errorCode ?? error.status ?? "HTTP \(status)"
        let described = error.message.map { "\(reason): \(Self.shortened($0))" } ?? reason
        var retryAfter: Duration?
        var isDeviceQuota = false
        let outcome: DeliveryOutcome
        switch code {
        case .unregistered?, .senderIDMismatch?:
            outcome = .tokenInvalid(reason: described)
        case .invalidArgument?:
            outcome = error.saysTokenIsInvalid ? .tokenInvalid(reason: described) : .permanentFailure(reason: described)
        case .thirdPartyAuthError?:
            outcome = .credentialsProblem(reason: "\(described) (the APNs or Web Push credentials configured in the Firebase project)")
        case .quotaExceeded?:
            outcome = .retryable(reason: described)
            isDeviceQuota = error.namesDeviceQuota
            retryAfter = isDeviceQuota ? retryAfterValue : max(retryAfterValue ?? .zero, Self.minimumQuotaDelay)
        case .unavailable?, .internalError?, .unspecifiedError?:
            outcome = .retryable(reason: described)
            retryAfter = retryAfterValue
        case .unknown?, nil:
            (outcome, retryAfter, isDeviceQuota) = Self.byStatus(status, error: error, described: described, retryAfter: retryAfterValue)
        }
        self.init(status: status, reason: reason, outcome: outcome, retryAfter: retryAfter, isDeviceQuota: isDeviceQuota, messageName: nil)
    }

    public init(status: Int, reason: String?, outcome: DeliveryOutcome, retryAfter: Duration?, isDeviceQuota: Bool, messageName: String?) {
        self.status = status
        self.reason = reason
        self.outcome = outcome
        self.retryAfter = retryAfter
        self.isDeviceQuota = isDeviceQuota
        self.messageName = messageName
    }

    /// No FcmError detail, or one this list does not know: `error.status`, then the HTTP status class.
    private static func byStatus(_ status: Int, error: FCMErrorBody, described: String, retryAfter: Duration?)
        -> (DeliveryOutcome, Duration?, Bool) {
        let rpcStatus = error.status ?? ""
        if status == 401 || rpcStatus == "UNAUTHENTICATED" {
            // Without an FcmError detail it is our OAuth access token that was refused (expired or
            // revoked): fetch a new one and send once more. With one, it is not ours to renew.
            return (error.hasFCMErrorDetail ? .credentialsProblem(reason: described) : .refreshCredentials(reason: described), nil, false)
        }
        if status == 403 || rpcStatus == "PERMISSION_DENIED" {
            // The service account may not send for this project (its role, the API disabled).
            return (.credentialsProblem(reason: described), nil, false)
        }
        if status == 429 || rpcStatus == "RESOURCE_EXHAUSTED" {
            let perDevice = error.namesDeviceQuota
            return (.retryable(reason: described), perDevice ? retryAfter : max(retryAfter ?? .zero, minimumQuotaDelay), perDevice)
        }
        if (500...599).contains(status) || rpcStatus == "UNAVAILABLE" || rpcStatus == "INTERNAL" {
            return (.retryable(reason: described), retryAfter, false)
        }
        if (400...499).contains(status) {
            return (.permanentFailure(reason: described), nil, false)
        }
        // 1xx or 3xx from a proxy in the way: not FCM's verdict on the device.
        return (.retryable(reason: described), retryAfter, false)
    }

    /// Error messages are Google's prose: kept short for events and logs.
    static func shortened(_ text: String) -> String {
        text.utf8.count <= 200 ? text : String(decoding: text.utf8.prefix(200), as: UTF8.self) + "…"
    }
}

/// The parts of a google.rpc error body (`{"error":{"code","message","status","details":[…]}}`)
/// that decide what an answer means.
struct FCMErrorBody {
    var message: String?
    var status: String?
    var errorCode: String?
    var hasFCMErrorDetail = false
    var hasFieldViolation = false
    var quotaViolations: [String] = []

    init(_ body: [UInt8]) {
        guard case let .object(root)? = try? JSONValue.parse(body), case let .object(error)? = root["error"] else { return }
        if case let .string(text)? = error["message"] { message = text }
        if case let .string(text)? = error["status"] { status = text }
        guard case let .array(details)? = error["details"] else { return }
        for case let .object(detail) in details {
            guard case let .string(type)? = detail["@type"] else { continue }
            switch type {
            case FCMAnswer.fcmErrorType:
                hasFCMErrorDetail = true
                if errorCode == nil, case let .string(code)? = detail["errorCode"] { errorCode = code }
            case FCMAnswer.badRequestType:
                if case let .array(violations)? = detail["fieldViolations"], !violations.isEmpty { hasFieldViolation = true }
            case FCMAnswer.quotaFailureType:
                if case let .array(violations)? = detail["violations"] {
                    for case let .object(violation) in violations {
                        for key in ["subject", "description"] {
                            if case let .string(text)? = violation[key] { quotaViolations.append(text) }
                        }
                    }
                }
            default:
                continue
            }
        }
    }

    /// FCM's INVALID_ARGUMENT names a bad token only in its message ("The registration token is not
    /// a valid FCM registration token"); a field violation is the payload's fault.
    var saysTokenIsInvalid: Bool {
        guard hasFCMErrorDetail, !hasFieldViolation, let message else { return false }
        let lowered = message.lowercased()
        return lowered.contains("registration token") && (lowered.contains("not a valid") || lowered.contains("invalid"))
    }

    /// A QuotaFailure whose violation is about one device (its subject or description says so).
    var namesDeviceQuota: Bool {
        quotaViolations.contains { text in
            let lowered = text.lowercased()
            return lowered.contains("device") || lowered.contains("registration token")
        }
    }
}
