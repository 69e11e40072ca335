import PushCore
import Testing
import WebPushCore

/// A Web Push job: subscriptions as devices, the plaintext payload, Urgency and Topic from the
/// shared fields; each refusal names the field.
@Suite struct WebPushJobRulesTests {
    typealias Sub = WebPushSubscriptionTests

    func parse(_ json: String) throws(JobRejection) -> PushJob {
        try JobParser.webPush.parse(Array(json.utf8), messageID: nil, now: 1_700_000_000, makeID: { "made" })
    }

    func rejection(_ json: String) -> JobRejection? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func subscriptionsAsObjectsOrStringsAreDevicesNamedByTheirEndpointAndKeys() throws {
        let compact = try WebPushSubscription(text: Sub.json).compact
        let other = "https://push.example.net/push/other#p256dh=\(Sub.p256dh)&auth=\(Sub.auth)"
        let job = try parse(#"{"id":"w","tokens":[\#(Sub.json),"\#(other)","\#(compact)"],"priority":5,"collapse_id":"score-1","payload":{"title":"Goal"}}"#)
        // The object and its compact form are one device: sent once.
        #expect(job.tokens.map(\.identity) == [compact, other])
        #expect(job.tokens.map(\.given) == [compact, other])
        #expect(job.webPush == WebPushJobOptions(priority: 5, topic: "score-1"))
        #expect(job.webPush.urgency == "normal")
        #expect(job.payload == Array(#"{"title":"Goal"}"#.utf8))
        // Written back and read again (a retry or a chunk): the same job.
        #expect(try JobParser.webPush.parse(job.encoded(), messageID: nil, now: 1_700_000_000, makeID: { "x" }) == job)
    }

    /// One endpoint, two key sets (a stale record beside a fresh one): both are sent, each
    /// encrypted for its keys. Before, one of them was kept at random.
    @Test func oneEndpointWithOtherKeysIsAnotherDevice() throws {
        let otherKey = "BA" + Sub.p256dh.dropFirst(2)
        let fresh = "\(Sub.endpoint)#p256dh=\(otherKey)&auth=\(Sub.auth)"
        let job = try parse(#"{"id":"w","tokens":[\#(Sub.json),"\#(fresh)"],"payload":{"n":1}}"#)
        #expect(job.tokens.count == 2)
        #expect(Set(job.tokens.map(\.identity)).count == 2)
    }

    @Test func aDeclarativeMessageNeedsATitleAndANavigateURL() throws {
        let good = #"{"tokens":[\#(Sub.json)],"payload":{"web_push":8030,"notification":{"title":"Hi","navigate":"https://example.com/"}}}"#
        #expect(throws: Never.self) { try parse(good) }
        let noNavigate = rejection(#"{"tokens":[\#(Sub.json)],"payload":{"web_push":8030,"notification":{"title":"Hi"}}}"#)
        #expect(noNavigate?.field == "payload.notification.navigate")
        let wrongMarker = rejection(#"{"tokens":[\#(Sub.json)],"payload":{"web_push":8031,"notification":{"title":"Hi","navigate":"https://e/"}}}"#)
        #expect(wrongMarker?.field == "payload.web_push")
    }

    @Test func refusalsNameTheField() {
        let badKey = rejection(#"{"tokens":[{"endpoint":"\#(Sub.endpoint)","keys":{"p256dh":"\#(Sub.p256dh)","auth":"AAAA"}}],"payload":{}}"#)
        #expect(badKey?.field == "tokens[0].keys.auth")
        let notHTTPS = rejection(#"{"tokens":["ftp://x/y#p256dh=\#(Sub.p256dh)&auth=\#(Sub.auth)"],"payload":{}}"#)
        #expect(notHTTPS?.field == "tokens[0].endpoint")
        let number = rejection(#"{"tokens":[7],"payload":{}}"#)
        #expect(number?.field == "tokens[0]")
        let topic = rejection(#"{"tokens":[\#(Sub.json)],"collapse_id":"a b","payload":{}}"#)
        #expect(topic?.field == "collapse_id")
        let longTopic = rejection(#"{"tokens":[\#(Sub.json)],"collapse_id":"\#(String(repeating: "a", count: 33))","payload":{}}"#)
        #expect(longTopic?.field == "collapse_id")
        let priority = rejection(#"{"tokens":[\#(Sub.json)],"priority":7,"payload":{}}"#)
        #expect(priority?.field == "priority")
        let apnsField = rejection(#"{"tokens":[\#(Sub.json)],"push_type":"alert","payload":{}}"#)
        #expect(apnsField?.field == "push_type", "an APNs field is unknown to a Web Push job")
    }

    @Test func thePayloadMustFitOneEncryptedMessage() {
        let fits = String(repeating: "x", count: WebPushJobRules.maxPayloadBytes - #"{"t":""}"#.utf8.count)
        #expect(throws: Never.self) { try parse(#"{"tokens":[\#(Sub.json)],"payload":{"t":"\#(fits)"}}"#) }
        let tooLong = rejection(#"{"tokens":[\#(Sub.json)],"payload":{"t":"\#(fits)x"}}"#)
        #expect(tooLong?.field == "payload")
        #expect(tooLong?.description.contains("3993") == true)
    }
}
