import PushCore
import Testing
@testable import PushworkerClient

@Suite struct FCMMessageTests {
    static func payload(_ message: FCMMessage, priority: PushworkerJob.Priority? = nil, collapseID: String? = nil,
                        expiration: PushworkerJob.Expiration? = nil) throws -> JSONValue? {
        var job = PushworkerJob.fcm(message, tokens: [Devices.fcmToken])
        job.priority = priority
        job.collapseID = collapseID
        job.expiration = expiration
        return try parsedJSON(job)["payload"]
    }

    @Test func eachMemberHasFCMsName() throws {
        let message = FCMMessage(
            notification: .init(title: "T", body: "B", image: "https://example.com/i.png"),
            data: ["story": "42"],
            android: ["notification": .object(["channel_id": .string("news")])],
            apns: ["headers": .object(["apns-priority": .string("5")])],
            webpush: ["fcm_options": .object(["link": .string("https://example.com")])],
            fcmOptions: ["analytics_label": .string("launch")])
        #expect(try Self.payload(message) == json("""
            {"notification":{"title":"T","body":"B","image":"https://example.com/i.png"},"data":{"story":"42"},
             "android":{"notification":{"channel_id":"news"}},"apns":{"headers":{"apns-priority":"5"}},
             "webpush":{"fcm_options":{"link":"https://example.com"}},"fcm_options":{"analytics_label":"launch"}}
            """))
        #expect(try Self.payload(FCMMessage(notification: .init(title: "only"))) == json(#"{"notification":{"title":"only"}}"#))
        #expect(try Self.payload(FCMMessage()) == json("{}"))
    }

    /// README "FCM jobs": android.priority, ttl and collapse_key may not also be job fields.
    @Test func androidMembersTheJobAlsoGivesAreRefused() throws {
        let cases: [(String, FCMMessage, PushworkerJob.Priority?, String?, PushworkerJob.Expiration?)] = [
            ("priority", FCMMessage(android: ["priority": .string("HIGH")]), .high, nil, nil),
            ("collapse_key", FCMMessage(android: ["collapse_key": .string("k")]), nil, "k", nil),
            ("ttl", FCMMessage(android: ["ttl": .string("60s")]), nil, nil, .after(seconds: 60)),
        ]
        for (member, message, priority, collapseID, expiration) in cases {
            let error = try #require(throws: PushworkerJobError.self) {
                try Self.payload(message, priority: priority, collapseID: collapseID, expiration: expiration)
            }
            #expect(error.field == "payload.android.\(member)")
            // Given in one place only, it is written.
            #expect(try Self.payload(message) != nil)
        }
    }
}

@Suite struct WebPushMessageTests {
    static func payload(_ message: WebPushMessage) throws -> JSONValue? {
        try parsedJSON(.webPush(message, subscriptions: [.token(Devices.webCompact)]))["payload"]
    }

    @Test func anyObjectIsThePayload() throws {
        let message = WebPushMessage(["title": .string("Hello"), "url": .string("/news/1"), "n": .array([.int(1), .double(2.5)])])
        #expect(try Self.payload(message) == json(#"{"title":"Hello","url":"/news/1","n":[1,2.5]}"#))
    }

    @Test func declarativeMessage() throws {
        let minimal = WebPushMessage.declarative(title: "Hello", navigate: "https://example.com/news/1")
        #expect(try Self.payload(minimal) == json(#"{"web_push":8030,"notification":{"title":"Hello","navigate":"https://example.com/news/1"}}"#))
        let full = WebPushMessage.declarative(title: "T", navigate: "https://example.com/", body: "B", lang: "en-US", dir: "ltr", silent: false,
                                              additional: ["tag": .string("news")])
        #expect(try Self.payload(full) == json("""
            {"web_push":8030,"notification":{"title":"T","navigate":"https://example.com/","body":"B","lang":"en-US","dir":"ltr","silent":false,"tag":"news"}}
            """))
        // The marker comes first, as WebKit writes it.
        let body = String(decoding: try PushworkerJob.webPush(minimal, subscriptions: [.token(Devices.webCompact)]).json(), as: UTF8.self)
        #expect(body.contains(#""payload":{"web_push":8030,"#))
    }
}
