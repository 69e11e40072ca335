import Testing
@testable import FCMCore
import PushCore

private let now = 1_700_000_000

private func body(_ payload: String, _ options: FCMJobOptions = FCMJobOptions(), expiration: Int = 0) -> String {
    let template = FCMMessageTemplate(payload: Array(payload.utf8), options: options, expiration: expiration, now: now)
    return String(decoding: template.body(token: "tok-1234567890abcdef"), as: UTF8.self)
}

@Suite("FCMMessageTemplate: the messages:send body")
struct FCMMessageTemplateTests {
    @Test("the payload's members follow the token; expiration 0 is ttl 0s")
    func plain() throws {
        let text = body(#"{"notification":{"title":"Hi"},"data":{"k":"v"}}"#)
        #expect(text == #"{"message":{"token":"tok-1234567890abcdef","notification":{"title":"Hi"},"data":{"k":"v"},"android":{"ttl":"0s"}}}"#)
        #expect(throws: Never.self) { try JSONValue.parse(Array(text.utf8)) }
    }

    @Test("priority, ttl and collapse key go into a new android object")
    func newAndroid() {
        #expect(body(#"{"data":{"k":"v"}}"#, FCMJobOptions(priority: 10, collapseKey: "score"), expiration: now + 3600)
            == #"{"message":{"token":"tok-1234567890abcdef","data":{"k":"v"},"android":{"priority":"HIGH","ttl":"3600s","collapse_key":"score"}}}"#)
    }

    @Test("…or into the payload's own android object, before its members")
    func existingAndroid() {
        #expect(body(#"{"android":{"notification":{"channel_id":"c"}},"data":{}}"#, FCMJobOptions(priority: 5), expiration: now + 60)
            == #"{"message":{"token":"tok-1234567890abcdef","android":{"priority":"NORMAL","ttl":"60s","notification":{"channel_id":"c"}},"data":{}}}"#)
        #expect(body(#"{"android":{}}"#, FCMJobOptions(priority: 1))
            == #"{"message":{"token":"tok-1234567890abcdef","android":{"priority":"NORMAL","ttl":"0s"}}}"#)
    }

    @Test("a payload's own android ttl wins over the job's expiration")
    func payloadTTL() {
        #expect(body(#"{"android":{"ttl":"30s"}}"#, expiration: now + 3600)
            == #"{"message":{"token":"tok-1234567890abcdef","android":{"ttl":"30s"}}}"#)
    }

    @Test("an empty payload still carries the ttl; the ttl is capped at 4 weeks and never negative")
    func ttlBounds() {
        #expect(body("{}") == #"{"message":{"token":"tok-1234567890abcdef","android":{"ttl":"0s"}}}"#)
        #expect(body("{}", expiration: now + 100 * 86_400) == #"{"message":{"token":"tok-1234567890abcdef","android":{"ttl":"2419200s"}}}"#)
        #expect(body("{}", expiration: now - 5) == #"{"message":{"token":"tok-1234567890abcdef","android":{"ttl":"0s"}}}"#)
    }

    @Test("a collapse key is escaped as JSON")
    func escaping() {
        #expect(body("{}", FCMJobOptions(collapseKey: #"a"b"#))
            == #"{"message":{"token":"tok-1234567890abcdef","android":{"ttl":"0s","collapse_key":"a\"b"}}}"#)
    }
}
