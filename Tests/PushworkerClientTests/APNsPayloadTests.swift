import PushCore
import Testing
@testable import PushworkerClient

/// Every APNsPayload field lands under the key Apple's "Generating a remote notification" names.
@Suite struct APNsPayloadTests {
    @Test func eachApsFieldHasApplesKey() throws {
        let cases: [(APNsPayload, String, JSONValue)] = [
            (APNsPayload(badge: 3), "badge", .int(3)),
            (APNsPayload(badge: 0), "badge", .int(0)),
            (APNsPayload(sound: "chime.caf"), "sound", .string("chime.caf")),
            (APNsPayload(contentAvailable: true), "content-available", .int(1)),
            (APNsPayload(mutableContent: true), "mutable-content", .int(1)),
            (APNsPayload(category: "MEETING"), "category", .string("MEETING")),
            (APNsPayload(threadID: "chat-7"), "thread-id", .string("chat-7")),
            (APNsPayload(targetContentID: "window-2"), "target-content-id", .string("window-2")),
            (APNsPayload(interruptionLevel: .timeSensitive), "interruption-level", .string("time-sensitive")),
            (APNsPayload(relevanceScore: 0.75), "relevance-score", .double(0.75)),
            (APNsPayload(filterCriteria: "work"), "filter-criteria", .string("work")),
        ]
        for (payload, key, value) in cases {
            let aps = try aps(payload)
            #expect(aps == [key: value], "\(key)")
        }
    }

    @Test func flagsOffAndUnsetFieldsAreLeftOut() throws {
        #expect(try aps(APNsPayload()) == [:])
        #expect(try aps(APNsPayload(contentAvailable: false, mutableContent: false)) == [:])
    }

    @Test func interruptionLevelsAreApplesStrings() {
        #expect(APNsPayload.InterruptionLevel.allCases.map(\.rawValue) == ["passive", "active", "time-sensitive", "critical"])
    }

    @Test func alertAsTextOrDictionary() throws {
        #expect(try aps(APNsPayload(alert: "Hello"))["alert"] == .string("Hello"))
        let alert = APNsPayload.Alert.content(
            title: "T", subtitle: "S", body: "B", titleLocKey: "TK", titleLocArgs: ["a1"], subtitleLocKey: "SK",
            subtitleLocArgs: ["s1", "s2"], locKey: "LK", locArgs: ["l1"], launchImage: "launch.png")
        #expect(try aps(APNsPayload(alert: alert))["alert"] == json("""
            {"title":"T","subtitle":"S","body":"B","title-loc-key":"TK","title-loc-args":["a1"],
             "subtitle-loc-key":"SK","subtitle-loc-args":["s1","s2"],"loc-key":"LK","loc-args":["l1"],"launch-image":"launch.png"}
            """))
        #expect(try aps(APNsPayload(alert: .content(body: "only")))["alert"] == json(#"{"body":"only"}"#))
    }

    @Test func criticalSoundIsTheDictionary() throws {
        #expect(try aps(APNsPayload(sound: .critical(name: "alarm.caf", volume: 0.5)))["sound"]
            == json(#"{"critical":1,"name":"alarm.caf","volume":0.5}"#))
        #expect(try aps(APNsPayload(sound: .critical(name: "default")))["sound"] == json(#"{"critical":1,"name":"default"}"#))
        #expect(try aps(APNsPayload(sound: .default))["sound"] == .string("default"))
    }

    @Test func customKeysSitBesideAps() throws {
        let payload = APNsPayload(alert: "Hi", custom: ["story": .int(42), "meta": .object(["k": .array([.bool(true), .null])])])
        let members = try parsedJSON(.apns(payload, tokens: [Devices.apnsToken]))
        #expect(try members["payload"] == json(#"{"aps":{"alert":"Hi"},"story":42,"meta":{"k":[true,null]}}"#))
    }

    @Test func additionalApsKeysAreWritten() throws {
        let payload = APNsPayload(additionalAPS: ["event": .string("update"), "timestamp": .int(1_700_000_000)])
        #expect(try aps(payload) == ["event": .string("update"), "timestamp": .int(1_700_000_000)])
    }

    @Test func aCustomApsOrARepeatedApsKeyIsRefusedNamingIt() throws {
        let custom = try #require(throws: PushworkerJobError.self) {
            try PushworkerJob.apns(APNsPayload(alert: "Hi", custom: ["aps": .object([:])]), tokens: [Devices.apnsToken]).json()
        }
        #expect(custom.field == "payload.aps")
        let repeated = try #require(throws: PushworkerJobError.self) {
            try PushworkerJob.apns(APNsPayload(badge: 1, additionalAPS: ["badge": .int(2)]), tokens: [Devices.apnsToken]).json()
        }
        #expect(repeated.field == "payload.aps.badge")
    }

    @Test func stringsAreEscaped() throws {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{07} é 😀"
        #expect(try aps(APNsPayload(alert: .text(text)))["alert"] == .string(text))
    }
}
