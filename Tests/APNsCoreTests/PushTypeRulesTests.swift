import APNsCore
import PushCore
import Testing

/// Apple may delay or drop, without an error, a push whose type disagrees with its topic or
/// payload: every push type's rules are checked when the job is read, and a job that breaks one is
/// rejected naming the field, unless its app sends such jobs anyway (`push_type_rules: warn`).
@Suite struct PushTypeRulesTests {
    static let token = String(repeating: "ab", count: 32)

    static func parse(_ type: APNsPushType?, payload: String, extra: String = "", rules: APNsJobRules = APNsJobRules()) throws(JobRejection) -> PushJob {
        let typeField = type.map { #""push_type":"\#($0.rawValue)","# } ?? ""
        let body = #"{"tokens":["\#(token)"],\#(typeField)\#(extra)"payload":\#(payload)}"#
        return try JobParser(rules: rules).parse(Array(body.utf8), messageID: "m", now: 1_700_000_000, makeID: { "id" })
    }

    static func rejection(_ type: APNsPushType?, payload: String, extra: String = "", rules: APNsJobRules = APNsJobRules()) -> JobRejection? {
        do {
            _ = try parse(type, payload: payload, extra: extra, rules: rules)
            return nil
        } catch {
            return error
        }
    }

    static func valid(_ type: APNsPushType) -> String {
        switch type {
        case .background: #"{"aps":{"content-available":1}}"#
        case .mdm: #"{"mdm":"00000000-1111-2222-3333-444444444444"}"#
        case .liveactivity: #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}"#
        case .controls, .widgets: #"{"aps":{"content-changed":true}}"#
        default: #"{"aps":{"alert":"x"}}"#
        }
    }

    @Test(arguments: APNsPushType.allCases)
    func eachPushTypeIsAcceptedWithAValidPayload(_ type: APNsPushType) throws {
        #expect(APNsPushType.allCases.count == 11)
        let job = try Self.parse(type, payload: Self.valid(type))
        #expect(job.apns.pushType == type)
        #expect(job.apns.ruleWarning == nil)
    }

    @Test(arguments: [
        (APNsPushType.background, #"{"aps":{"content-available":1,"alert":"x"}}"#, "payload.aps.alert"),
        (.background, #"{"aps":{"content-available":1,"badge":3}}"#, "payload.aps.badge"),
        (.background, #"{"aps":{"sound":"x"}}"#, "payload.aps.content-available"),
        (.background, #"{"aps":{"content-available":true}}"#, "payload.aps.content-available"),
        (.controls, #"{"aps":{"alert":"x"}}"#, "payload.aps.content-changed"),
        (.widgets, #"{"aps":{"content-changed":1}}"#, "payload.aps.content-changed"),
        (.liveactivity, #"{"aps":{"alert":"x"}}"#, "payload.aps.event"),
        (.liveactivity, #"{"aps":{"event":"pause","timestamp":1700000000}}"#, "payload.aps.event"),
        (.liveactivity, #"{"aps":{"event":"update","content-state":{}}}"#, "payload.aps.timestamp"),
        (.liveactivity, #"{"aps":{"event":"update","timestamp":1700000000}}"#, "payload.aps.content-state"),
        (.liveactivity, #"{"aps":{"event":"start","timestamp":1700000000,"content-state":{}}}"#, "payload.aps.attributes-type"),
        (.liveactivity, #"{"aps":{"event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"Score"}}"#, "payload.aps.attributes"),
    ])
    func aBrokenPayloadIsRejectedNamingItsField(_ type: APNsPushType, payload: String, field: String) {
        let rejection = Self.rejection(type, payload: payload)
        #expect(rejection?.field == field, "\(type.rawValue) \(payload): \(rejection.map { "\($0.field ?? "-"): \($0.problem)" } ?? "accepted")")
    }

    @Test func aLiveActivityEndNeedsNoContentStateAndAStartItsAttributes() throws {
        _ = try Self.parse(.liveactivity, payload: #"{"aps":{"event":"end","timestamp":1700000000}}"#)
        _ = try Self.parse(.liveactivity, payload: #"{"aps":{"event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"Score","attributes":{"team":"A"}}}"#)
    }

    @Test func prioritiesTopicsAndAuthenticationFollowThePushType() {
        #expect(Self.rejection(.liveactivity, payload: Self.valid(.liveactivity), extra: #""priority":1,"#)?.field == "priority")
        #expect(Self.rejection(.background, payload: Self.valid(.background), extra: #""priority":10,"#)?.field == "priority")
        #expect(Self.rejection(.alert, payload: Self.valid(.alert), extra: #""topic":"com.example.app.push-type.liveactivity","#)?.field == "topic")
        #expect(Self.rejection(.voip, payload: Self.valid(.voip), extra: #""topic":"com.example.app.voip-ptt","#)?.field == "topic")
        // A bundle ID may end in a word that is another type's suffix by chance: .voip is not refused.
        #expect(Self.rejection(.alert, payload: Self.valid(.alert), extra: #""topic":"com.acme.voip","#) == nil)
        #expect(Self.rejection(.liveactivity, payload: Self.valid(.liveactivity), extra: #""topic":"com.example.app.push-type.liveactivity","#) == nil)
        let certificate = APNsJobRules(tokenAuthentication: false)
        #expect(Self.rejection(.liveactivity, payload: Self.valid(.liveactivity), rules: certificate)?.field == "push_type")
        #expect(Self.rejection(.location, payload: Self.valid(.location), rules: certificate)?.field == "push_type")
        #expect(Self.rejection(.alert, payload: Self.valid(.alert), rules: certificate) == nil)
    }

    @Test func warnSendsTheJobAndSaysWhichRuleItBreaks() throws {
        let warn = APNsJobRules(pushTypeRules: .warn)
        let job = try Self.parse(.controls, payload: #"{"aps":{"alert":"x"}}"#, rules: warn)
        #expect(job.apns.pushType == .controls)
        let warning = try #require(job.apns.ruleWarning)
        #expect(warning.hasPrefix("payload.aps.content-changed must be true for controls pushes"))
        // An inferred background push (aps holds only content-available) breaks nothing.
        #expect(try Self.parse(nil, payload: #"{"aps":{"content-available":1}}"#).apns.pushType == .background)
    }
}
