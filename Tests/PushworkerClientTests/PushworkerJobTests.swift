import APNsCore
import FCMCore
import Foundation
import PushCore
import Testing
import WebPushCore
@testable import PushworkerClient

@Suite struct PushworkerJobTests {
    static let alert = APNsPayload(alert: "Hi")

    @Test func eachJobFieldHasTheREADMEsKey() throws {
        var job = PushworkerJob.apns(Self.alert, tokens: [Devices.apnsToken])
        job.id = "job-1"
        #expect(try parsedJSON(job) == ["id": .string("job-1"), "tokens": .array([.string(Devices.apnsToken)]),
                                        "payload": json(#"{"aps":{"alert":"Hi"}}"#)])
        let cases: [(WritableKeyPath<PushworkerJob, String?>, String?, String)] = [(\.app, "shop", "app"), (\.collapseID, "score", "collapse_id")]
        for (path, value, key) in cases {
            var changed = job
            changed[keyPath: path] = value
            #expect(try parsedJSON(changed)[key] == value.map(JSONValue.string), "\(key)")
        }
        var other = job
        other.groups = ["news", "beta"]
        #expect(try parsedJSON(other)["groups"] == json(#"["news","beta"]"#))
        other.bulk = true
        #expect(try parsedJSON(other)["bulk"] == .bool(true))
        other.bulk = false
        #expect(try parsedJSON(other)["bulk"] == nil)
        for priority in PushworkerJob.Priority.allCases {
            other.priority = priority
            #expect(try parsedJSON(other)["priority"] == .int(Int64(priority.rawValue)))
        }
        #expect(PushworkerJob.Priority.allCases.map(\.rawValue) == [10, 5, 1])
        other.customFields = ["x-trace": .string("t-1"), "x-n": .int(2)]
        let custom = try parsedJSON(other)
        #expect(custom["x-trace"] == .string("t-1") && custom["x-n"] == .int(2))
    }

    @Test func apnsPushTypeAndTopic() throws {
        let job = PushworkerJob.apns(APNsPayload(alert: "Hi"), tokens: [Devices.apnsToken], pushType: .voip, topic: "com.example.app")
        let members = try parsedJSON(job)
        #expect(members["push_type"] == .string("voip"))
        #expect(members["topic"] == .string("com.example.app"))
        // The worker's push types and this library's are the same list.
        #expect(PushworkerJob.APNsPushType.all.map(\.rawValue) == APNsCore.APNsPushType.allCases.map(\.rawValue))
    }

    @Test func expirationForms() throws {
        var job = PushworkerJob.apns(Self.alert, tokens: [Devices.apnsToken])
        let cases: [(PushworkerJob.Expiration, JSONValue)] = [
            (.now, .int(0)), (.unixTime(1_800_000_000), .int(1_800_000_000)), (.after(seconds: 3600), .string("+3600")),
            (.after(.seconds(90)), .string("+90")), (.at(Date(timeIntervalSince1970: 1_800_000_000.7)), .int(1_800_000_000)),
        ]
        for (expiration, value) in cases {
            job.expiration = expiration
            #expect(try parsedJSON(job)["expiration"] == value)
        }
        job.expiration = .after(seconds: -1)
        #expect(throws: PushworkerJobError(field: "expiration", "\"+N\" must be 0…31622400 seconds (at most a year), got -1")) { try job.json() }
    }

    @Test func devicesAreStringsOrSubscriptionObjects() throws {
        let job = PushworkerJob.webPush(WebPushMessage(["title": .string("Hi")]), subscriptions: [
            .subscription(endpoint: Devices.webEndpoint, p256dh: Devices.webP256dh, auth: Devices.webAuth),
            .token(Devices.webCompact),
        ])
        #expect(try parsedJSON(job)["tokens"] == .array([
            .object(["endpoint": .string(Devices.webEndpoint), "keys": .object(["p256dh": .string(Devices.webP256dh), "auth": .string(Devices.webAuth)])]),
            .string(Devices.webCompact),
        ]))
        #expect(PushworkerDevice.subscription(endpoint: Devices.webEndpoint, p256dh: Devices.webP256dh, auth: Devices.webAuth).given == Devices.webCompact)
    }

    @Test func theDefaultIDIsAFreshLowercaseUUID() throws {
        let first = PushworkerJob.apns(Self.alert, tokens: [Devices.apnsToken])
        let second = PushworkerJob.apns(Self.alert, tokens: [Devices.apnsToken])
        #expect(first.id != second.id)
        #expect(UUID(uuidString: first.id) != nil && first.id == first.id.lowercased())
        #expect(try parsedJSON(first)["id"] == .string(first.id))
        #expect(first.jobID == PushworkerJobID(first.id) && first.jobID.description == first.id)
    }

    @Test func misuseIsRefusedNamingTheField() throws {
        let cases: [(PushworkerJob, String)] = [
            (.apns(Self.alert), "tokens"),
            (PushworkerJob(id: "", devices: [.token(Devices.apnsToken)], platform: .apns(Self.alert)), "id"),
            (PushworkerJob(devices: [.token(Devices.apnsToken)], customFields: ["trace": .null], platform: .apns(Self.alert)), "trace"),
            (PushworkerJob(devices: [.token(Devices.apnsToken), .subscription(endpoint: Devices.webEndpoint, p256dh: Devices.webP256dh, auth: Devices.webAuth)],
                           platform: .apns(Self.alert)), "tokens[1]"),
        ]
        for (job, field) in cases {
            let error = try #require(throws: PushworkerJobError.self) { try job.json() }
            #expect(error.field == field)
        }
        // Groups alone name devices.
        _ = try PushworkerJob.apns(Self.alert, groups: ["news"]).json()
    }

    @Test func rawPayloadReplacesTheBuilder() throws {
        var job = PushworkerJob.apns(APNsPayload(alert: "ignored"), tokens: [Devices.apnsToken])
        job.rawPayload = ["aps": .object(["alert": .string("raw")]), "k": .int(1)]
        #expect(try parsedJSON(job)["payload"] == json(#"{"aps":{"alert":"raw"},"k":1}"#))
    }
}

/// The JSON each platform's builders write is what the worker's own parser accepts, field for field.
@Suite struct WorkerParserAcceptanceTests {
    static let rules: [String: any PlatformJobRules] = ["ios": APNsJobRules(), "android": FCMJobRules(), "web": WebPushJobRules()]
    static let parser = JobParser(platforms: [APNsJobRules(), FCMJobRules(), WebPushJobRules()])
    static let now = 1_700_000_000

    static func parse(_ job: PushworkerJob) throws -> PushJob {
        try parser.parse(try job.json(), messageID: nil, now: now, makeID: { "generated" }) { (app: String) throws(JobRejection) in
            guard let rules = rules[app] else { throw JobRejection(field: "app", "unknown app \(app)") }
            return rules
        }
    }

    @Test func apnsJob() throws {
        var job = PushworkerJob.apns(
            APNsPayload(alert: .content(title: "Sale", body: "Today only"), badge: 1, sound: .default, mutableContent: true, category: "SALE",
                        threadID: "shop", interruptionLevel: .timeSensitive, relevanceScore: 0.5, custom: ["sale": .int(7)]),
            app: "ios", tokens: [Devices.apnsToken], groups: ["vip"], pushType: .alert, topic: "com.example.shop")
        job.priority = .normal
        job.expiration = .after(seconds: 3600)
        job.collapseID = "sale"
        job.bulk = true
        job.customFields = ["x-campaign": .string("spring")]
        let parsed = try Self.parse(job)
        #expect(parsed.id == job.id && parsed.app == "ios" && parsed.bulk)
        #expect(parsed.tokens.map(\.given) == [Devices.apnsToken] && parsed.groups == ["vip"])
        #expect(parsed.expiration == Self.now + 3600)
        #expect(parsed.apns == APNsJobOptions(pushType: .alert, priority: 5, collapseID: "sale", topic: "com.example.shop"))
        #expect(try JSONValue.parse(parsed.payload) == json("""
            {"aps":{"alert":{"title":"Sale","body":"Today only"},"badge":1,"sound":"default","mutable-content":1,"category":"SALE",
             "thread-id":"shop","interruption-level":"time-sensitive","relevance-score":0.5},"sale":7}
            """))
        // Key for key, as README "The job" documents an APNs job.
        #expect(try JSONValue.parse(try job.json()) == json("""
            {"id":"\(job.id)","app":"ios","tokens":["\(Devices.apnsToken)"],"groups":["vip"],"bulk":true,"push_type":"alert","priority":5,
             "expiration":"+3600","collapse_id":"sale","topic":"com.example.shop","x-campaign":"spring","payload":\(String(decoding: parsed.payload, as: UTF8.self))}
            """))
    }

    @Test func backgroundApnsJobIsReadAsBackground() throws {
        var job = PushworkerJob.apns(APNsPayload(contentAvailable: true), app: "ios", tokens: [Devices.apnsToken])
        job.priority = .normal
        #expect(try Self.parse(job).apns.pushType == .background)
    }

    @Test func fcmJob() throws {
        var job = PushworkerJob.fcm(
            FCMMessage(notification: .init(title: "Hello", body: "World"), data: ["story": "42"],
                       android: ["notification": .object(["channel_id": .string("news")])]),
            app: "android", tokens: [Devices.fcmToken], groups: ["phones"])
        job.priority = .high
        job.collapseID = "score"
        job.expiration = .after(seconds: 60)
        let parsed = try Self.parse(job)
        #expect(parsed.fcm == FCMJobOptions(priority: 10, collapseKey: "score"))
        #expect(parsed.tokens.map(\.given) == [Devices.fcmToken] && parsed.groups == ["phones"])
        #expect(parsed.expiration == Self.now + 60)
        #expect(try JSONValue.parse(try job.json()) == json("""
            {"id":"\(job.id)","app":"android","tokens":["\(Devices.fcmToken)"],"groups":["phones"],"priority":10,"expiration":"+60",
             "collapse_id":"score","payload":{"notification":{"title":"Hello","body":"World"},"data":{"story":"42"},
             "android":{"notification":{"channel_id":"news"}}}}
            """))
        #expect(try JSONValue.parse(parsed.payload) == JSONValue.parse(try job.json()).objectMember("payload"))
    }

    @Test func webPushJob() throws {
        var job = PushworkerJob.webPush(
            .declarative(title: "Hello", navigate: "https://example.com/news/1", body: "News"), app: "web",
            subscriptions: [.subscription(endpoint: Devices.webEndpoint, p256dh: Devices.webP256dh, auth: Devices.webAuth),
                            .token("https://other.example.net/wp/x#p256dh=\(Devices.webP256dh)&auth=\(Devices.webAuth)")])
        job.priority = .low
        job.collapseID = "news"
        job.expiration = .unixTime(1_800_000_000)
        let parsed = try Self.parse(job)
        #expect(parsed.webPush == WebPushJobOptions(priority: 1, topic: "news"))
        // A subscription is its endpoint and keys.
        #expect(parsed.tokens.map(\.identity) == ["\(Devices.webEndpoint)#p256dh=\(Devices.webP256dh)&auth=\(Devices.webAuth)",
                                                   "https://other.example.net/wp/x#p256dh=\(Devices.webP256dh)&auth=\(Devices.webAuth)"])
        #expect(parsed.expiration == 1_800_000_000)
        #expect(try JSONValue.parse(parsed.payload) == json(#"{"web_push":8030,"notification":{"title":"Hello","navigate":"https://example.com/news/1","body":"News"}}"#))
    }

    /// What the builders do not check, the worker still does: the library does not hide its refusals.
    @Test func theWorkerStillRefusesWhatTheBuildersLetThrough() throws {
        let job = PushworkerJob.apns(Self.alertPayload, app: "ios", tokens: ["not-hex"])
        let rejection = try #require(throws: JobRejection.self) { try Self.parse(job) }
        #expect(rejection.field == "tokens[0]")
    }

    static let alertPayload = APNsPayload(alert: "Hi")
}

extension JSONValue {
    func objectMember(_ name: String) -> JSONValue? {
        if case .object(let members) = self { members[name] } else { nil }
    }
}
