import HTTP2
import PushCore
import PushTransport
import Testing
import WebPush

/// Every status a push service answers, and what the worker makes of it.
@Suite struct WebPushAnswerTests {
    static let hint = "the VAPID key (public key BXYZ…) and vapid.subject mailto:push@example.com"

    static func answer(_ status: Int, _ body: String = "", headers: [HTTP2Header] = []) -> PushResult {
        WebPushAnswer.result(status: status, headers: headers, body: Array(body.utf8), vapid: hint, now: 1000)
    }

    @Test func acceptedCarriesTheMessageLocation() {
        let result = Self.answer(201, headers: [HTTP2Header(name: "location", value: "https://push.example/m/1")])
        #expect(result.outcome == .sent)
        #expect(result.requestID == "https://push.example/m/1")
    }

    @Test(arguments: [(404, "NotFound"), (410, "Gone")])
    func aGoneSubscriptionIsInvalid(_ status: Int, _ reason: String) {
        #expect(Self.answer(status).outcome == .tokenInvalid(reason: reason))
    }

    @Test func theServicesOwnWordsAreTheReason() {
        // Mozilla's autopush body, and Apple's.
        let mozilla = Self.answer(410, #"{"code":410,"errno":106,"error":"Gone","message":"Request did not validate No such subscription"}"#)
        #expect(mozilla.outcome == .tokenInvalid(reason: "Request did not validate No such subscription (errno 106)"))
        #expect(Self.answer(410, #"{"reason":"Unregistered"}"#).reason == "Unregistered")
    }

    @Test func tooLargeIsPermanent() {
        #expect(Self.answer(413).outcome == .permanentFailure(reason: "PayloadTooLarge"))
    }

    @Test(arguments: [429, 500, 502, 503])
    func throttlingAndOutagesAreRetriedAfterRetryAfter(_ status: Int) {
        let result = Self.answer(status, headers: [HTTP2Header(name: "retry-after", value: "120")])
        guard case .retryable = result.outcome else {
            Issue.record("\(status) gave \(result.outcome)")
            return
        }
        #expect(result.retryAfter == .seconds(120))
        #expect(Self.answer(status).retryAfter == nil, "no header, no minimum: the ladder decides")
    }

    @Test(arguments: [(401, ""), (403, #"{"reason":"BadJwtToken"}"#), (400, #"{"message":"Invalid bearer token: bad signature"}"#)])
    func refusedVAPIDPausesTheApp(_ status: Int, _ body: String) {
        guard case let .credentialsProblem(reason) = Self.answer(status, body).outcome else {
            Issue.record("\(status) \(body) is not a credentials problem")
            return
        }
        #expect(reason.contains("VAPID"))
        #expect(reason.contains(Self.hint))
    }

    @Test func aBadRequestAboutTheMessageIsThatMessagesFailure() {
        #expect(Self.answer(400, #"{"reason":"BadEncryption"}"#).outcome == .permanentFailure(reason: "BadEncryption"))
        #expect(Self.answer(418).outcome == .permanentFailure(reason: "HTTP 418"))
    }

    @Test func aLongOrControlFilledBodyIsCutAndCleaned() {
        let reason = Self.answer(500, "line one\u{7}\nline two " + String(repeating: "x", count: 600)).reason
        #expect(reason == "line one ")
        let long = Self.answer(500, #"{"reason":""# + String(repeating: "y", count: 500) + #""}"#).reason ?? ""
        #expect(long.count == 201 && long.hasSuffix("…"))
    }
}
