import Testing
@testable import FCMCore
import PushCore

private let now = 1_700_000_000

/// An FCM error body as Google writes it: `error.code`, `message`, `status`, and the details.
private func errorBody(_ status: Int, _ rpcStatus: String?, message: String = "m", errorCode: String? = nil, extraDetails: [String] = []) -> [UInt8] {
    var details = extraDetails
    if let errorCode { details.insert(#"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(errorCode)"}"#, at: 0) }
    let statusMember = rpcStatus.map { #","status":"\#($0)""# } ?? ""
    return Array(#"{"error":{"code":\#(status),"message":"\#(message)"\#(statusMember),"details":[\#(details.joined(separator: ","))]}}"#.utf8)
}

private func answer(_ status: Int, _ body: [UInt8], retryAfter: String? = nil) -> FCMAnswer {
    FCMAnswer(status: status, body: body, retryAfterHeader: retryAfter, now: now)
}

private let tokenNotValid = "The registration token is not a valid FCM registration token"
private let badRequestOnTTL = #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.android.ttl","description":"Invalid value"}]}"#
private let deviceQuotaDetail = #"{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"device","description":"Device message rate exceeded"}]}"#

@Suite("FCMAnswer: FCM's answers → outcomes (Firebase: FCM error codes)")
struct FCMAnswerTests {
    @Test("200 with a name is sent, and the name is the request id")
    func sent() {
        let accepted = answer(200, Array(#"{"name":"projects/demo/messages/0:1700000000%abc"}"#.utf8))
        #expect(accepted.outcome == .sent)
        #expect(accepted.messageName == "projects/demo/messages/0:1700000000%abc")
        #expect(accepted.reason == nil)
        #expect(accepted.retryAfter == nil)
        #expect(answer(200, []).outcome == .sent)
        #expect(answer(200, []).messageName == nil)
    }

    @Test("UNREGISTERED (404) is a dead token")
    func unregistered() {
        let unregistered = answer(404, errorBody(404, "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED"))
        #expect(unregistered.outcome == .tokenInvalid(reason: "UNREGISTERED: Requested entity was not found."))
        #expect(unregistered.reason == "UNREGISTERED")
    }

    @Test("INVALID_ARGUMENT whose FcmError message says the registration token is not valid is a dead token")
    func invalidToken() {
        let refused = answer(400, errorBody(400, "INVALID_ARGUMENT", message: tokenNotValid, errorCode: "INVALID_ARGUMENT"))
        #expect(refused.outcome == .tokenInvalid(reason: "INVALID_ARGUMENT: \(tokenNotValid)"))
    }

    @Test("INVALID_ARGUMENT about anything else, or with a BadRequest field violation, is the payload's fault")
    func invalidPayload() {
        let other = answer(400, errorBody(400, "INVALID_ARGUMENT", message: "Request contains an invalid argument.", errorCode: "INVALID_ARGUMENT"))
        #expect(other.outcome == .permanentFailure(reason: "INVALID_ARGUMENT: Request contains an invalid argument."))
        let field = answer(400, errorBody(400, "INVALID_ARGUMENT", message: tokenNotValid, errorCode: "INVALID_ARGUMENT", extraDetails: [badRequestOnTTL]))
        #expect(field.outcome == .permanentFailure(reason: "INVALID_ARGUMENT: \(tokenNotValid)"))
        let noDetail = answer(400, errorBody(400, "INVALID_ARGUMENT", message: tokenNotValid, extraDetails: [badRequestOnTTL]))
        #expect(noDetail.outcome == .permanentFailure(reason: "INVALID_ARGUMENT: \(tokenNotValid)"))
        let bare = answer(400, errorBody(400, "INVALID_ARGUMENT", message: tokenNotValid))
        #expect(bare.outcome == .permanentFailure(reason: "INVALID_ARGUMENT: \(tokenNotValid)"), "without an FcmError detail the message alone decides nothing")
    }

    @Test("SENDER_ID_MISMATCH (403) is a token of another project")
    func senderIDMismatch() {
        let mismatch = answer(403, errorBody(403, "PERMISSION_DENIED", message: "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH"))
        #expect(mismatch.outcome == .tokenInvalid(reason: "SENDER_ID_MISMATCH: SenderId mismatch"))
        #expect(mismatch.reason == "SENDER_ID_MISMATCH")
    }

    @Test("THIRD_PARTY_AUTH_ERROR (401) is the Firebase project's APNs or Web Push credentials")
    func thirdPartyAuth() {
        let refused = answer(401, errorBody(401, "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service", errorCode: "THIRD_PARTY_AUTH_ERROR"))
        #expect(refused.outcome == .credentialsProblem(reason: "THIRD_PARTY_AUTH_ERROR: Auth error from APNS or Web Push Service (the APNs or Web Push credentials configured in the Firebase project)"))
    }

    @Test("401 without an FcmError detail is our access token: refresh it")
    func expiredAccessToken() {
        let message = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
        let refused = answer(401, errorBody(401, "UNAUTHENTICATED", message: message))
        #expect(refused.outcome == .refreshCredentials(reason: "UNAUTHENTICATED: \(message)"))
        #expect(refused.reason == "UNAUTHENTICATED")
        #expect(answer(401, []).outcome == .refreshCredentials(reason: "HTTP 401"))
    }

    @Test("403 PERMISSION_DENIED without SENDER_ID_MISMATCH is the service account's permission")
    func permissionDenied() {
        let refused = answer(403, errorBody(403, "PERMISSION_DENIED", message: "Permission 'cloudmessaging.messages.create' denied"))
        #expect(refused.outcome == .credentialsProblem(reason: "PERMISSION_DENIED: Permission 'cloudmessaging.messages.create' denied"))
        #expect(answer(403, []).outcome == .credentialsProblem(reason: "HTTP 403"))
    }

    @Test("QUOTA_EXCEEDED for the project waits at least a minute, longer when Retry-After says so")
    func projectQuota() {
        let body = errorBody(429, "RESOURCE_EXHAUSTED", message: "Quota exceeded", errorCode: "QUOTA_EXCEEDED")
        let bare = answer(429, body)
        #expect(bare.outcome == .retryable(reason: "QUOTA_EXCEEDED: Quota exceeded"))
        #expect(bare.retryAfter == .seconds(60))
        #expect(!bare.isDeviceQuota)
        #expect(answer(429, body, retryAfter: "10").retryAfter == .seconds(60))
        #expect(answer(429, body, retryAfter: "120").retryAfter == .seconds(120))
    }

    @Test("QUOTA_EXCEEDED with a QuotaFailure naming the device backs off that device alone")
    func deviceQuota() {
        let body = errorBody(429, "RESOURCE_EXHAUSTED", message: "Quota exceeded", errorCode: "QUOTA_EXCEEDED", extraDetails: [deviceQuotaDetail])
        let limited = answer(429, body)
        #expect(limited.outcome == .retryable(reason: "QUOTA_EXCEEDED: Quota exceeded"))
        #expect(limited.isDeviceQuota)
        #expect(limited.retryAfter == nil, "the worker's own backoff")
        #expect(answer(429, body, retryAfter: "5").retryAfter == .seconds(5))
    }

    @Test("UNAVAILABLE, INTERNAL and UNSPECIFIED_ERROR are retried, honouring Retry-After", arguments: [
        (503, "UNAVAILABLE", "UNAVAILABLE"), (500, "INTERNAL", "INTERNAL"), (500, "UNKNOWN", "UNSPECIFIED_ERROR"),
    ])
    func serverTrouble(_ status: Int, _ rpcStatus: String, _ code: String) {
        let body = errorBody(status, rpcStatus, message: "try later", errorCode: code)
        #expect(answer(status, body).outcome == .retryable(reason: "\(code): try later"))
        #expect(answer(status, body).retryAfter == nil)
        #expect(answer(status, body, retryAfter: "30").retryAfter == .seconds(30))
        #expect(answer(status, body, retryAfter: "Tue, 14 Nov 2023 22:14:20 GMT").retryAfter == .seconds(60), "an HTTP-date a minute after now")
    }

    @Test("5xx without a body is retried with its Retry-After", arguments: [500, 502, 503, 504])
    func bare5xx(_ status: Int) {
        #expect(answer(status, Array("<html>busy</html>".utf8), retryAfter: "7").outcome == .retryable(reason: "HTTP \(status)"))
        #expect(answer(status, [], retryAfter: "7").retryAfter == .seconds(7))
    }

    @Test("an unknown FcmError code falls back on status, then on the status class", arguments: [
        (400, nil, "permanentFailure"), (404, "NOT_FOUND", "permanentFailure"), (413, nil, "permanentFailure"),
        (401, "UNAUTHENTICATED", "credentialsProblem"), (403, "PERMISSION_DENIED", "credentialsProblem"),
        (429, nil, "retryable"), (500, nil, "retryable"), (503, "UNAVAILABLE", "retryable"), (302, nil, "retryable"),
        (400, "UNAVAILABLE", "retryable"),
    ] as [(Int, String?, String)])
    func unknownCode(_ status: Int, _ rpcStatus: String?, _ kind: String) {
        let reason = "BRAND_NEW_2027: m"
        let expected: DeliveryOutcome = switch kind {
        case "credentialsProblem": .credentialsProblem(reason: reason)
        case "retryable": .retryable(reason: reason)
        default: .permanentFailure(reason: reason)
        }
        let mapped = answer(status, errorBody(status, rpcStatus, errorCode: "BRAND_NEW_2027"))
        #expect(mapped.outcome == expected)
        #expect(mapped.reason == "BRAND_NEW_2027")
        #expect(FCMErrorCode(rawValue: "BRAND_NEW_2027") == .unknown("BRAND_NEW_2027"))
    }

    @Test("no FcmError detail: error.status names the reason, else the HTTP status")
    func reasonText() {
        #expect(answer(404, errorBody(404, "NOT_FOUND")).reason == "NOT_FOUND")
        #expect(answer(418, Array("teapot".utf8)).reason == "HTTP 418")
        #expect(answer(418, Array("teapot".utf8)).outcome == .permanentFailure(reason: "HTTP 418"))
    }

    @Test("each documented code has the status and google.rpc status Firebase pairs with it")
    func codeTable() {
        let table: [FCMErrorCode: (Int?, String?)] = [
            .unspecifiedError: (nil, nil), .invalidArgument: (400, "INVALID_ARGUMENT"), .unregistered: (404, "NOT_FOUND"),
            .senderIDMismatch: (403, "PERMISSION_DENIED"), .quotaExceeded: (429, "RESOURCE_EXHAUSTED"),
            .unavailable: (503, "UNAVAILABLE"), .internalError: (500, "INTERNAL"), .thirdPartyAuthError: (401, "UNAUTHENTICATED"),
        ]
        #expect(Set(FCMErrorCode.allCases) == Set(table.keys))
        for code in FCMErrorCode.allCases {
            #expect(code.status == table[code]?.0, "\(code)")
            #expect(code.rpcStatus == table[code]?.1, "\(code)")
            #expect(FCMErrorCode(rawValue: code.rawValue) == code)
        }
    }

    @Test("a long error message is cut in the outcome's reason")
    func longMessage() {
        let message = String(repeating: "m", count: 300)
        let mapped = answer(500, errorBody(500, "INTERNAL", message: message, errorCode: "INTERNAL"))
        #expect(mapped.outcome == .retryable(reason: "INTERNAL: " + String(repeating: "m", count: 200) + "…"))
    }
}
