import APNsCore
import PushCore
import Testing

/// A job's `live_activity` section builds the `aps` dictionary ActivityKit documents for a Live
/// Activity start, update and end, and is refused naming the field where it breaks the rules.
@Suite struct LiveActivityJobTests {
    static let token = String(repeating: "cd", count: 32)
    static let now = 1_700_000_000

    static func parse(_ section: String, extra: String = "") throws(JobRejection) -> PushJob {
        let body = #"{"tokens":["\#(token)"],\#(extra)"live_activity":\#(section)}"#
        return try JobParser(rules: APNsJobRules()).parse(Array(body.utf8), messageID: "m", now: now, makeID: { "id" })
    }

    static func rejection(_ section: String, extra: String = "") -> JobRejection? {
        do {
            _ = try parse(section, extra: extra)
            return nil
        } catch {
            return error
        }
    }

    static func payload(_ job: PushJob) -> String { String(decoding: job.payload, as: UTF8.self) }

    /// The shapes of ActivityKit's documentation: a push-to-start with attributes and an alert, an
    /// update with its content state, and an end with a dismissal date.
    @Test func startUpdateAndEndAreBuiltAsActivityKitDocumentsThem() throws {
        let start = try Self.parse(#"""
        {"event":"start","timestamp":1700000100,"attributes_type":"MatchAttributes","attributes":{"home":"A","away":"B"},
         "content_state":{"score":"0-0"},"alert":{"title":"Kick-off","body":"A vs B"},"input_push_token":true}
        """#)
        #expect(start.apns.pushType == .liveactivity)
        #expect(start.apns.priority == 10)
        #expect(Self.payload(start) == #"{"aps":{"timestamp":1700000100,"event":"start","content-state":{"score":"0-0"},"attributes-type":"MatchAttributes","attributes":{"away":"B","home":"A"},"input-push-token":1,"alert":{"body":"A vs B","title":"Kick-off"}}}"#)

        let update = try Self.parse(#"{"event":"update","content_state":{"score":"1-0","minute":12},"stale_date":1700003600,"relevance_score":75.5}"#,
                                    extra: #""priority":5,"#)
        #expect(update.apns.priority == 5)
        #expect(Self.payload(update) == #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"minute":12,"score":"1-0"},"stale-date":1700003600,"relevance-score":75.5}}"#,
                "timestamp defaults to when the job was read")

        let end = try Self.parse(#"{"event":"end","timestamp":1700009000,"content_state":{"score":"2-1"},"dismissal_date":1700012600}"#)
        #expect(Self.payload(end) == #"{"aps":{"timestamp":1700009000,"event":"end","content-state":{"score":"2-1"},"dismissal-date":1700012600}}"#)
        #expect(try Self.parse(#"{"event":"end"}"#).payload.count > 0, "an end needs no content state")
    }

    /// A retry or chunk job carries the built payload and the push type, not the section: read
    /// back, it is the same notification with the same timestamp.
    @Test func aRetriedJobKeepsTheBuiltPayload() throws {
        let job = try Self.parse(#"{"event":"update","content_state":{"score":"1-0"}}"#)
        let again = try JobParser(rules: APNsJobRules()).parse(job.encoded(), messageID: nil, now: Self.now + 3600, makeID: { "x" })
        #expect(again.payload == job.payload)
        #expect(again.apns.pushType == .liveactivity)
    }

    @Test(arguments: [
        (#"{"content_state":{}}"#, "live_activity.event"),
        (#"{"event":"pause","content_state":{}}"#, "live_activity.event"),
        (#"{"event":"update"}"#, "live_activity.content_state"),
        (#"{"event":"update","content_state":[1]}"#, "live_activity.content_state"),
        (#"{"event":"update","content_state":{},"timestamp":1700000000000}"#, "live_activity.timestamp"),
        (#"{"event":"update","content_state":{},"timestamp":"now"}"#, "live_activity.timestamp"),
        (#"{"event":"update","content_state":{},"stale_date":-1}"#, "live_activity.stale_date"),
        (#"{"event":"update","content_state":{},"dismissal_date":1700000000}"#, "live_activity.dismissal_date"),
        (#"{"event":"update","content_state":{},"relevance_score":"high"}"#, "live_activity.relevance_score"),
        (#"{"event":"update","content_state":{},"attributes":{}}"#, "live_activity.attributes"),
        (#"{"event":"start","content_state":{},"attributes":{}}"#, "live_activity.attributes_type"),
        (#"{"event":"start","content_state":{},"attributes_type":"T"}"#, "live_activity.attributes"),
        (#"{"event":"start","content_state":{},"attributes_type":"T","attributes":{},"input_push_token":1}"#, "live_activity.input_push_token"),
        (#"{"event":"update","content_state":{},"alert":"hi"}"#, "live_activity.alert"),
        (#"{"event":"update","content_state":{},"contentState":{}}"#, "live_activity"),
        (#"[1]"#, "live_activity"),
    ])
    func aBrokenSectionIsRefusedNamingTheField(section: String, field: String) {
        let refused = Self.rejection(section)
        #expect(refused?.field == field, "\(refused.map { "\($0.field ?? "-"): \($0.problem)" } ?? "accepted")")
    }

    @Test func theSectionReplacesPayloadAndTakesOnlyTheLiveActivityPushType() {
        let both = Self.rejection(#"{"event":"end"}"#, extra: #""payload":{"aps":{}},"#)
        #expect(both?.field == "live_activity")
        #expect(both?.problem.contains("not both") == true)
        let alert = Self.rejection(#"{"event":"end"}"#, extra: #""push_type":"alert","#)
        #expect(alert?.field == "push_type")
        #expect(Self.rejection(#"{"event":"end"}"#, extra: #""push_type":"liveactivity","#) == nil)
        // Live Activities need token authentication, as the push type's rule says.
        let body = #"{"tokens":["\#(Self.token)"],"live_activity":{"event":"end"}}"#
        do {
            _ = try JobParser(rules: APNsJobRules(tokenAuthentication: false)).parse(Array(body.utf8), messageID: nil, now: Self.now, makeID: { "id" })
            Issue.record("a certificate app sent a Live Activity")
        } catch {
            #expect(error.field == "push_type")
        }
    }
}
