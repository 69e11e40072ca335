import APNsCore
import PushCore
import Testing
@testable import GatewayCore

/// pushd's UDP packets: registrations, and notifications as jobs the worker's parser accepts.
@Suite struct PushdPacketTests {
    static func notification(_ json: String) throws(PushdRefusal) -> [UInt8] {
        try PushdPacket.notificationJob(Array(json.utf8), app: "ios", jobID: "pushd-1")
    }

    static func notificationRefusal(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> PushdRefusal {
        try #require(throws: PushdRefusal.self, sourceLocation: sourceLocation) { try notification(json) }
    }

    static func registrationRefusal(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> PushdRefusal {
        try #require(throws: PushdRefusal.self, sourceLocation: sourceLocation) { try PushdPacket.registration(Array(json.utf8)) }
    }

    // MARK: registration

    @Test func aRegistrationNamesADeviceAndAGroup() throws {
        let registration = try PushdPacket.registration(Array(#"{"device": "\#(Fixture.token)", "group": "news"}"#.utf8))
        #expect(registration == PushdRegistration(device: Fixture.token, group: "news"))
        let upper = try PushdPacket.registration(Array(#"{"group":"news","device":"\#(Fixture.token.uppercased())"}"#.utf8))
        #expect(upper.device == Fixture.token)
    }

    @Test func aBadRegistrationIsRefusedNamingTheMember() throws {
        let cases: [(json: String, field: String?)] = [
            (#"{"group":"news"}"#, "device"),
            (#"{"device":"\#(Fixture.token)"}"#, "group"),
            (#"{"device":42,"group":"news"}"#, "device"),
            (#"{"device":"abc","group":"news"}"#, "device"),
            (#"{"device":"\#(Fixture.token)","group":["news"]}"#, "group"),
            (#"{"device":"\#(Fixture.token)","group":"two words"}"#, "group"),
            (#"{"device":"\#(Fixture.token)","group":""}"#, "group"),
            (#"{"device":"\#(Fixture.token)","group":"a\u0001"}"#, "group"),
            (#"{"device":"\#(Fixture.token)","group":"\#(String(repeating: "g", count: 256))"}"#, "group"),
            (#"{"device":"\#(Fixture.token)","group":"news","groups":["x"]}"#, "groups"),
            (#"["\#(Fixture.token)","news"]"#, nil),
            (#"{"device":"#, nil),
            ("", nil),
        ]
        for (json, field) in cases {
            let refused = try Self.registrationRefusal(json)
            #expect(refused.field == field, "\(json): \(refused)")
            if let field { #expect(refused.message.hasPrefix("\(field): ")) }
        }
    }

    // MARK: notification

    @Test(arguments: [
        ("background", APNsPushType.background, 5), ("normal", .alert, 5), ("urgent", .alert, 10),
    ])
    func eachTypeIsAPushTypeAndPriority(type: String, pushType: APNsPushType, priority: Int) throws {
        let payload = type == "background" ? #"{"aps":{"content-available":1}}"# : #"{"aps":{"alert":"Hi"}}"#
        let job = try workerJob(try Self.notification(#"{"groups":["news","beta"],"type":"\#(type)","payload":\#(payload)}"#))
        #expect(job.apns == APNsJobOptions(pushType: pushType, priority: priority))
        #expect(job.groups == ["news", "beta"])
        #expect(job.tokens.isEmpty)
        #expect(job.id == "pushd-1" && job.app == "ios")
        #expect(text(job.payload) == payload)
    }

    @Test func theDefaultsAreABackgroundPushTriedOnce() throws {
        let job = try workerJob(try Self.notification(#"{"groups":["news"],"payload":{"aps":{"content-available":1},"x":1}}"#))
        #expect(job.apns == APNsJobOptions(pushType: .background, priority: 5))
        #expect(job.expiration == 0)
        #expect(job.apns.collapseID == nil)
    }

    @Test func keyAndExpirationCarryOver() throws {
        let json = #"{ "groups" : ["news"], "type": "urgent", "expiration": 1800000000, "key": "score", "payload": { "aps" : { "alert" : "Hi" } } }"#
        let job = try workerJob(try Self.notification(json))
        #expect(job.expiration == 1_800_000_000)
        #expect(job.apns.collapseID == "score")
        #expect(text(job.payload) == #"{"aps":{"alert":"Hi"}}"#)
        let longestKey = String(repeating: "k", count: 64)
        #expect(try workerJob(try Self.notification(#"{"groups":["a"],"type":"normal","key":"\#(longestKey)","payload":{"aps":{"alert":"Hi"}}}"#)).apns.collapseID == longestKey)
        #expect(try workerJob(try Self.notification(#"{"groups":["a"],"type":"normal","key":"","expiration":0,"payload":{"aps":{"alert":"Hi"}}}"#)).apns.collapseID == nil)
    }

    @Test func aBadNotificationIsRefusedNamingTheMember() throws {
        let aps = #"{"aps":{"alert":"Hi"}}"#
        let cases: [(json: String, field: String?)] = [
            (#"{"payload":\#(aps)}"#, "groups"),
            (#"{"groups":[],"payload":\#(aps)}"#, "groups"),
            (#"{"groups":"news","payload":\#(aps)}"#, "groups"),
            (#"{"groups":["news",7],"payload":\#(aps)}"#, "groups[1]"),
            (#"{"groups":["news","a b"],"payload":\#(aps)}"#, "groups[1]"),
            (#"{"groups":["news"]}"#, "payload"),
            (#"{"groups":["news"],"payload":"hi"}"#, "payload"),
            (#"{"groups":["news"],"payload":{"alert":"Hi"}}"#, "payload.aps"),
            (#"{"groups":["news"],"payload":{"aps":[]}}"#, "payload.aps"),
            (#"{"groups":["news"],"payload":{"aps":{"alert":"\#(String(repeating: "x", count: 4100))"}}}"#, "payload"),
            (#"{"groups":["news"],"type":"loud","payload":\#(aps)}"#, "type"),
            (#"{"groups":["news"],"type":5,"payload":\#(aps)}"#, "type"),
            (#"{"groups":["news"],"expiration":-1,"payload":\#(aps)}"#, "expiration"),
            (#"{"groups":["news"],"expiration":"+60","payload":\#(aps)}"#, "expiration"),
            (#"{"groups":["news"],"expiration":1.5,"payload":\#(aps)}"#, "expiration"),
            (#"{"groups":["news"],"key":5,"payload":\#(aps)}"#, "key"),
            (#"{"groups":["news"],"key":"\#(String(repeating: "k", count: 65))","payload":\#(aps)}"#, "key"),
            (#"{"groups":["news"],"key":"a\nb","payload":\#(aps)}"#, "key"),
            (#"{"groups":["news"],"expiraton":5,"payload":\#(aps)}"#, "expiraton"),
            (#"{"groups":["news"],"device":"\#(Fixture.token)","payload":\#(aps)}"#, "device"),
            (#"[]"#, nil),
            (#"{"groups":["news"],"payload":\#(aps)} x"#, nil),
            (#"{"groups":["news"],"payload":{"aps":{"alert":"\#u{1}"}}}"#, nil),
        ]
        for (json, field) in cases {
            let refused = try Self.notificationRefusal(json)
            #expect(refused.field == field, "\(json.prefix(120)): \(refused)")
        }
    }

    @Test func tooManyGroupsAndOversizedPacketsAreRefused() throws {
        let many = (0...JobParser.maxGroups).map { "\"g\($0)\"" }.joined(separator: ",")
        #expect(try Self.notificationRefusal(#"{"groups":[\#(many)],"payload":{"aps":{}}}"#).field == "groups")
        let big = [UInt8](repeating: UInt8(ascii: " "), count: PushdPacket.maxPacketBytes + 1)
        let refused = try #require(throws: PushdRefusal.self) { try PushdPacket.notificationJob(big, app: "ios", jobID: "1") }
        #expect(refused.field == nil && refused.message.contains("65507"))
        #expect(throws: PushdRefusal.self) { try PushdPacket.registration(big) }
    }

    @Test func aRepeatedMemberCountsOnceTheLastTime() throws {
        // urgent: an alert (pushd's default type is background, which may carry no alert).
        let job = try workerJob(try Self.notification(#"{"groups":["a"],"type":"urgent","payload":{"aps":{"alert":"1"}},"payload":{"aps":{"alert":"2"}}}"#))
        #expect(text(job.payload) == #"{"aps":{"alert":"2"}}"#)
    }

    @Test func anUnknownMembersNameIsShownCut() throws {
        let name = String(repeating: "n", count: 300)
        let refused = try Self.notificationRefusal(#"{"\#(name)":1,"groups":["a"],"payload":{"aps":{}}}"#)
        #expect((refused.field?.utf8.count ?? 0) < 60)
        #expect(refused.problem.contains("unknown member"))
    }
}
