import Testing
@testable import FCMCore
import PushCore

private let token = "dXk3b0rG2xE:APA91bH-example_token.0123456789"

private func parse(_ json: String) throws(JobRejection) -> PushJob {
    try JobParser.fcm.parse(Array(json.utf8), messageID: nil, now: 1_700_000_000, makeID: { "made" })
}

/// A job for `token` with `payload` and extra job fields (`"priority":10,` …).
private func job(payload: String, fields: String = "") -> String {
    #"{"id":"j1",\#(fields)"tokens":["\#(token)"],"payload":\#(payload)}"#
}

private func rejection(_ json: String) -> JobRejection? {
    do {
        _ = try parse(json)
        return nil
    } catch {
        return error
    }
}

@Suite("FCMJobRules: a job's FCM fields and payload")
struct FCMJobRulesTests {
    @Test("a notification job is read with its priority and collapse key, and survives encoding")
    func accepted() throws {
        let parsed = try parse(job(payload: #"{"notification":{"title":"Hi","body":"…"},"data":{"k":"v"},"android":{"notification":{"channel_id":"c"}}}"#,
                                   fields: #""priority":5,"collapse_id":"score","#))
        #expect(parsed.fcm == FCMJobOptions(priority: 5, collapseKey: "score"))
        #expect(parsed.fcm.androidPriority == "NORMAL")
        #expect(parsed.tokens.map(\.identity) == [token])
        #expect(try JobParser.fcm.parse(parsed.encoded(), messageID: nil, now: 1_700_000_000, makeID: { "x" }) == parsed)
        #expect(JobParser.fcm.rules.platformName == "fcm")
    }

    @Test("priority 10 is HIGH, 5 and 1 are NORMAL, none leaves FCM's default")
    func priorities() {
        #expect(FCMJobOptions(priority: 10).androidPriority == "HIGH")
        #expect(FCMJobOptions(priority: 5).androidPriority == "NORMAL")
        #expect(FCMJobOptions(priority: 1).androidPriority == "NORMAL")
        #expect(FCMJobOptions().androidPriority == nil)
    }

    @Test("every rejection names its field and says what is wrong", arguments: [
        (job(payload: #"{"data":{"k":1}}"#), "payload.data.k", "must be a string (FCM data values are strings), got 1"),
        (job(payload: #"{"data":{"k":null}}"#), "payload.data.k", "must be a string (FCM data values are strings), got null"),
        (job(payload: #"{"data":["a"]}"#), "payload.data", "must be a JSON object of string values, got an array"),
        (job(payload: #"{"android":{"data":{"n":true}}}"#), "payload.android.data.n", "must be a string (FCM data values are strings), got true"),
        (job(payload: #"{"data":{"from":"x"}}"#), "payload.data.from", "is a reserved key (FCM refuses \"from\", \"message_type\" and keys starting with \"google\" or \"gcm\")"),
        (job(payload: #"{"data":{"gcm":"x"}}"#), "payload.data.gcm", "is a reserved key (FCM refuses \"from\", \"message_type\" and keys starting with \"google\" or \"gcm\")"),
        (job(payload: #"{"data":{"google.sent_time":"x"}}"#), "payload.data.google.sent_time", "is a reserved key (FCM refuses \"from\", \"message_type\" and keys starting with \"google\" or \"gcm\")"),
        (job(payload: #"{"data":{"message_type":"x"}}"#), "payload.data.message_type", "is a reserved key (FCM refuses \"from\", \"message_type\" and keys starting with \"google\" or \"gcm\")"),
        (job(payload: #"{"token":"abc"}"#), "payload.token", "the worker sets the target (token) for each device; give devices in \"tokens\" or \"groups\", not in the payload"),
        (job(payload: #"{"topic":"news"}"#), "payload.topic", "the worker sets the target (token) for each device; give devices in \"tokens\" or \"groups\", not in the payload"),
        (job(payload: #"{"condition":"'a' in topics"}"#), "payload.condition", "the worker sets the target (token) for each device; give devices in \"tokens\" or \"groups\", not in the payload"),
        (job(payload: #"{"notifcation":{}}"#), "payload.notifcation", "is not a member of an FCM message (allowed: android, apns, data, fcm_options, notification, webpush)"),
        (job(payload: #"{"name":"projects/p/messages/1"}"#), "payload.name", "is not a member of an FCM message (allowed: android, apns, data, fcm_options, notification, webpush)"),
        (job(payload: #"{"notification":"Hi"}"#), "payload.notification", "must be a JSON object, got a string"),
        (job(payload: #"{"apns":[]}"#), "payload.apns", "must be a JSON object, got an array"),
        (job(payload: #"{"android":"HIGH"}"#), "payload.android", "must be a JSON object (the AndroidConfig), got a string"),
        (job(payload: #"{"android":{"priority":"HIGH"}}"#, fields: #""priority":10,"#), "payload.android.priority", "is also given as the job's \"priority\": give it in one place"),
        (job(payload: #"{"android":{"ttl":"60s"}}"#, fields: #""expiration":"+60","#), "payload.android.ttl", "is also given by the job's \"expiration\": give it in one place"),
        (job(payload: #"{"android":{"collapse_key":"a"}}"#, fields: #""collapse_id":"b","#), "payload.android.collapse_key", "is also given as the job's \"collapse_id\": give it in one place"),
        (job(payload: #"{"android":{"priority":"high"}}"#), "payload.android.priority", "must be \"HIGH\" or \"NORMAL\", got \"high\""),
        (job(payload: #"{"android":{"ttl":"60"}}"#), "payload.android.ttl", "must be a duration string of seconds such as \"3600s\" or \"3.5s\", got \"60\""),
        (job(payload: #"{"android":{"ttl":"1m"}}"#), "payload.android.ttl", "must be a duration string of seconds such as \"3600s\" or \"3.5s\", got \"1m\""),
        (job(payload: #"{"android":{"ttl":"2419201s"}}"#), "payload.android.ttl", "is 2419201s; FCM keeps a message at most 4 weeks (2419200s)"),
        (job(payload: #"{"android":{"collapse_key":7}}"#), "payload.android.collapse_key", "must be a string, got 7"),
        (job(payload: "{}", fields: #""priority":7,"#), "priority", "must be 10, 5 or 1 (android.priority HIGH, NORMAL or NORMAL), got 7"),
        (job(payload: "{}", fields: #""priority":"high","#), "priority", "must be an integer in 1…10, got \"high\""),
        (job(payload: "{}", fields: #""collapse_id":"","#), "collapse_id", "becomes android.collapse_key: 1–64 bytes, not empty"),
        (job(payload: "{}", fields: #""push_type":"alert","#), "push_type", "unknown field (known: app, attempts, bulk, chunk, collapse_id, expiration, groups, id, payload, priority, source_groups, tokens; prefix your own fields with x-)"),
    ])
    func rejections(_ json: String, _ field: String, _ problem: String) {
        let refused = rejection(json)
        #expect(refused == JobRejection(field: field, problem), "\(String(describing: refused))")
    }

    @Test("a payload over 4096 bytes is refused with its size")
    func tooLarge() {
        let payload = #"{"data":{"k":"\#(String(repeating: "x", count: 4100))"}}"#
        let refused = rejection(job(payload: payload))
        #expect(payload.utf8.count == 4117)
        #expect(refused == JobRejection(field: "payload", "is 4117 bytes; FCM allows at most 4096 bytes in a message"))
    }

    @Test("a payload that fills 4096 bytes exactly is accepted")
    func exactlyAtLimit() throws {
        let fill = String(repeating: "x", count: 4096 - #"{"data":{"k":""}}"#.utf8.count)
        let parsed = try parse(job(payload: #"{"data":{"k":"\#(fill)"}}"#))
        #expect(parsed.payload.count == 4096)
    }

    @Test("the payload's own android priority, ttl and collapse key are fine without the job fields")
    func androidInPayload() throws {
        let parsed = try parse(job(payload: #"{"android":{"priority":"NORMAL","ttl":"3.5s","collapse_key":"k"}}"#))
        #expect(parsed.fcm == FCMJobOptions())
    }

    @Test("registration tokens: a sane charset and length, each problem said", arguments: [
        (#""""#, "tokens[0]", "is empty; an FCM registration token is a non-empty string"),
        (#""short""#, "tokens[0]", "is 5 characters; an FCM registration token has 16–4096"),
        (#""abcdefghijklmnop qrs""#, "tokens[0]", "has ' ' at offset 16; an FCM registration token is made of A–Z, a–z, 0–9, '-', '_', ':' and '.'"),
        (#""abcdefghijklmnop\"qrs""#, "tokens[0]", "has '\"' at offset 16; an FCM registration token is made of A–Z, a–z, 0–9, '-', '_', ':' and '.'"),
        (#""abcdefghijklmnopé""#, "tokens[0]", "has byte 0xC3 at offset 16; an FCM registration token is made of A–Z, a–z, 0–9, '-', '_', ':' and '.'"),
        ("42", "tokens[0]", "must be an FCM registration token (a string), got a number"),
    ])
    func badTokens(_ device: String, _ field: String, _ problem: String) {
        let refused = rejection(#"{"tokens":[\#(device)],"payload":{}}"#)
        #expect(refused == JobRejection(field: field, problem), "\(String(describing: refused))")
    }

    @Test("a 4096-character token is accepted, 4097 refused")
    func tokenLengthLimit() {
        let longest = String(repeating: "a", count: 4096)
        #expect(rejection(#"{"tokens":["\#(longest)"],"payload":{}}"#) == nil)
        #expect(rejection(#"{"tokens":["\#(longest)a"],"payload":{}}"#) == JobRejection(field: "tokens[0]", "is 4097 characters; an FCM registration token has 16–4096"))
    }

    @Test("the same token twice is one device; tokens keep their case")
    func duplicates() throws {
        let upper = token.uppercased()
        let parsed = try parse(#"{"tokens":["\#(token)","\#(token)","\#(upper)"],"payload":{}}"#)
        #expect(parsed.tokens.map(\.identity) == [token, upper])
    }
}

@Suite("FCMDurationText: protobuf Duration strings")
struct FCMDurationTextTests {
    @Test("seconds with up to nine fractional digits and an s", arguments: [
        ("0s", 0.0), ("3600s", 3600.0), ("3.5s", 3.5), ("2419200s", 2_419_200.0), ("1.000000001s", 1.000000001),
    ])
    func valid(_ text: String, _ seconds: Double) {
        #expect(FCMDurationText.seconds(text) == seconds)
    }

    @Test("anything else is not a Duration", arguments: ["", "s", "60", "1m", "-1s", "1.s", ".5s", "1.0000000001s", "1e3s", " 1s", "1 s"])
    func invalid(_ text: String) {
        #expect(FCMDurationText.seconds(text) == nil)
    }
}
