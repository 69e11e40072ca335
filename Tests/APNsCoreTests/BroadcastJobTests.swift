import APNsCore
import PushCore
import Testing

/// A job with a `channel` is a Live Activity broadcast: exactly one audience, Live Activity pushes
/// only, no collapse id, up to 5 KB of payload, and written back (for a retry) as a broadcast.
@Suite struct BroadcastJobTests {
    static let channel = "dHN0LXNyY2gtY2hubA=="
    static let update = #""live_activity":{"event":"update","timestamp":1700000000,"content_state":{"score":"1-0"}}"#

    static func parse(_ fields: String, rules: APNsJobRules = APNsJobRules()) throws(JobRejection) -> PushJob {
        try JobParser(rules: rules).parse(Array("{\(fields)}".utf8), messageID: "m", now: 1_700_000_000, makeID: { "id" })
    }

    static func rejection(_ fields: String, rules: APNsJobRules = APNsJobRules()) -> JobRejection? {
        do {
            _ = try parse(fields, rules: rules)
            return nil
        } catch {
            return error
        }
    }

    @Test func aChannelIsTheJobsOneAudience() throws {
        let job = try Self.parse(#""channel":"\#(Self.channel)",\#(Self.update)"#)
        #expect(job.apns.channel == Self.channel && job.apns.pushType == .liveactivity)
        #expect(job.tokens.map(\.given) == [Self.channel], "the channel is sent once, as the round's one device")
        // A retry reads back as the same broadcast: no tokens written.
        let retry = job.derived(tokens: job.tokens, attempts: 1, chunk: nil)
        let text = String(decoding: retry.encoded(), as: UTF8.self)
        #expect(text.contains(#""channel":"\#(Self.channel)""#) && !text.contains(#""tokens""#))
        let reread = try JobParser(rules: APNsJobRules()).parse(retry.encoded(), messageID: nil, now: 1_700_000_000, makeID: { "x" })
        #expect(reread.apns.channel == Self.channel && reread.attempts == 1 && reread.payload == job.payload)
    }

    @Test func devicesAndAChannelTogetherAreRefused() {
        let token = String(repeating: "ab", count: 32)
        let both = Self.rejection(#""channel":"\#(Self.channel)","tokens":["\#(token)"],\#(Self.update)"#)
        #expect(both?.field == "channel" && both?.problem.contains("not both") == true)
        let group = Self.rejection(#""channel":"\#(Self.channel)","groups":["fans"],\#(Self.update)"#)
        #expect(group?.field == "channel")
        let neither = Self.rejection(#"\#(Self.update)"#)
        #expect(neither?.field == "tokens" && neither?.problem.contains(#"or a "channel""#) == true)
    }

    @Test func aBroadcastIsALiveActivityPushWithoutCollapseID() {
        let alert = Self.rejection(#""channel":"\#(Self.channel)","push_type":"alert","payload":{"aps":{"alert":"hi"}}"#)
        #expect(alert?.field == "push_type" && alert?.problem.contains("broadcast") == true)
        let collapse = Self.rejection(#""channel":"\#(Self.channel)","collapse_id":"score",\#(Self.update)"#)
        #expect(collapse?.field == "collapse_id")
        let certificate = Self.rejection(#""channel":"\#(Self.channel)",\#(Self.update)"#, rules: APNsJobRules(tokenAuthentication: false))
        #expect(certificate?.field == "push_type" && certificate?.problem.contains("token authentication") == true)
    }

    @Test func aChannelIdIsBase64() {
        for bad in [#""not base64!""#, #""abc""#, "42", #""""#] {
            let rejection = Self.rejection(#""channel":\#(bad),\#(Self.update)"#)
            #expect(rejection?.field == "channel", "\(bad)")
        }
    }

    @Test func aBroadcastMayCarryFiveKilobytes() throws {
        let filler = String(repeating: "x", count: 4500)
        let big = #""channel":"\#(Self.channel)","payload":{"aps":{"event":"update","timestamp":1700000000,"content-state":{"text":"\#(filler)"}}}"#
        let job = try Self.parse(big)
        #expect(job.payload.count > 4096)
        let tooBig = #""channel":"\#(Self.channel)","payload":{"aps":{"event":"update","timestamp":1700000000,"content-state":{"text":"\#(filler)\#(filler)"}}}"#
        let rejection = Self.rejection(tooBig)
        #expect(rejection?.field == "payload" && rejection?.problem.contains("5120") == true)
    }
}
