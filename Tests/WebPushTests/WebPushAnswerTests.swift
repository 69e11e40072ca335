import HTTP2
import PushCore
import PushTransport
import Testing
import WebPush

/// Every status a push service answers, and what the worker makes of it.
@Suite struct WebPushAnswerTests {
    static let hint = "the VAPID key (public key BXYZ…) and vapid.subject mailto:push@example.com"

    static func read(_ status: Int, _ body: String = "", headers: [HTTP2Header] = []) -> WebPushAnswer.Reading {
        WebPushAnswer.read(status: status, headers: headers, body: Array(body.utf8), now: 1000)
    }

    /// An answer that means the same whatever the other answers were.
    static func answer(_ status: Int, _ body: String = "", headers: [HTTP2Header] = []) -> PushResult {
        guard case let .result(result) = read(status, body, headers: headers) else {
            Issue.record("\(status) \(body) is a VAPID refusal")
            return PushResult(status: status, reason: nil, outcome: .sent)
        }
        return result
    }

    @Test func acceptedCarriesTheMessageLocation() {
        let result = Self.answer(201, headers: [HTTP2Header(name: "location", value: "https://push.example/m/1")])
        #expect(result.outcome == .sent)
        #expect(result.requestID == "https://push.example/m/1")
    }

    @Test func aTTLShorterThanAskedIsTheGrantedTTL() {
        func granted(_ text: String?, asked: Int?) -> Int? {
            let headers = text.map { [HTTP2Header(name: "ttl", value: $0)] } ?? []
            guard case let .result(result) = WebPushAnswer.read(status: 201, headers: headers, body: [], now: 1000, requestedTTL: asked) else { return -1 }
            return result.grantedTTL
        }
        #expect(granted("60", asked: 3600) == 60)
        #expect(granted("0", asked: 3600) == 0)
        #expect(granted("3600", asked: 3600) == nil, "kept as asked")
        #expect(granted("86400", asked: 3600) == nil, "a longer one says nothing")
        #expect(granted(nil, asked: 3600) == nil)
        #expect(granted("soon", asked: 3600) == nil)
        #expect(granted("-5", asked: 3600) == nil)
        #expect(granted("99999999999999999999", asked: 3600) == nil)
        #expect(granted("60", asked: nil) == nil)
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

    /// What they mean depends on the other answers (`WebPushRefusalJudge`): here only that they
    /// are refusals, with the service's words and whether those say the key is another's.
    @Test(arguments: [
        (401, "", "Unauthorized", false), (403, "", "Forbidden", false),
        (403, #"{"reason":"BadJwtToken"}"#, "BadJwtToken", false),
        (400, #"{"message":"Invalid bearer token: bad signature"}"#, "Invalid bearer token: bad signature", false),
        (403, "the VAPID credentials in the authorization header do not correspond to the credentials used to create the subscriptions.\n",
         "the VAPID credentials in the authorization header do not correspond to the credentials used to create the subscriptions.", true),
        (401, #"{"code":401,"errno":109,"error":"Unauthorized","message":"VAPID public key mismatch"}"#, "VAPID public key mismatch (errno 109)", true),
    ])
    func refusedVAPIDIsARefusal(_ status: Int, _ body: String, _ reason: String, _ mismatch: Bool) {
        #expect(Self.read(status, body) == .refusal(WebPushAnswer.Refusal(status: status, reason: reason, keyMismatch: mismatch)))
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
