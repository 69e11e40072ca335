import APNsCore
import Testing
import WebPushCore
@testable import PushCore

/// One parser for a fleet of APNs and Web Push apps: the job's app picks the platform's rules.
@Suite struct MultiPlatformParserTests {
    static let parser = JobParser(platforms: [APNsJobRules(), WebPushJobRules()])
    static let subscription = "https://push.example.net/wp/abc#p256dh=BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4&auth=BTBZMqHH6r4Tts7J_aSIgg"
    static let apps: [String: any PlatformJobRules] = ["ios": APNsJobRules(), "web": WebPushJobRules()]

    static func parse(_ body: String) throws(JobRejection) -> PushJob {
        try parser.parse(Array(body.utf8), messageID: nil, now: Fixed.now, makeID: { Fixed.generatedID }) { (app: String) throws(JobRejection) in
            guard let rules = apps[app] else { throw JobRejection(field: "app", "unknown app \"\(app)\"") }
            return rules
        }
    }

    @Test func eachAppsJobReadsWithItsPlatformsRules() throws {
        let ios = try Self.parse(#"{"app":"ios","tokens":["\#(Tok.a)"],"push_type":"alert","payload":{"aps":{"alert":"Hi"}}}"#)
        #expect(ios.apns.pushType == .alert)
        #expect(ios.tokens.map(\.identity) == [Tok.a])
        let web = try Self.parse(#"{"app":"web","tokens":["\#(Self.subscription)"],"priority":5,"collapse_id":"news","payload":{"title":"Hi"}}"#)
        #expect(web.webPush == WebPushJobOptions(priority: 5, topic: "news"))
        // A subscription is its endpoint and keys.
        #expect(web.tokens.map(\.identity).map { $0.prefix { $0 != "#" } } == ["https://push.example.net/wp/abc"])
        #expect(web.tokens.allSatisfy { $0.identity.contains("#p256dh=") })
    }

    @Test func aDeviceIsReadTheAppsWay() {
        // A hex token is no subscription, and a subscription no hex token.
        #expect(throws: JobRejection.self) { try Self.parse(#"{"app":"web","tokens":["\#(Tok.a)"],"payload":{"title":"Hi"}}"#) }
        #expect(throws: JobRejection.self) { try Self.parse(#"{"app":"ios","tokens":["\#(Self.subscription)"],"payload":{"aps":{}}}"#) }
    }

    @Test func anotherPlatformsFieldIsRefusedNamingWhoseItIs() throws {
        let rejection = try #require(throws: JobRejection.self) {
            try Self.parse(#"{"app":"web","tokens":["\#(Self.subscription)"],"push_type":"alert","payload":{"title":"Hi"}}"#)
        }
        #expect(rejection.field == "push_type")
        #expect(rejection.problem.contains("is a field of apns jobs"))
        #expect(rejection.problem.contains("app \"web\" sends with webpush"))
    }

    @Test func aFieldNoPlatformKnowsIsUnknown() throws {
        let rejection = try #require(throws: JobRejection.self) {
            try Self.parse(#"{"app":"web","tokens":["\#(Self.subscription)"],"pushtype":"alert","payload":{"title":"Hi"}}"#)
        }
        #expect(rejection.field == "pushtype")
        #expect(rejection.problem.contains("unknown field"))
    }

    @Test func theAppIsCheckedBeforeTheDevices() throws {
        let rejection = try #require(throws: JobRejection.self) {
            try Self.parse(#"{"app":"android","tokens":["x"],"payload":{}}"#)
        }
        #expect(rejection.field == "app")
    }

    @Test func withOnePlatformEveryKnownFieldIsItsOwn() throws {
        // JobParser.apns has no per-platform table: the single-platform path stays as it was.
        #expect(JobParser.apns.platformFields.isEmpty)
        #expect(Self.parser.platformFields.count == 2)
        #expect(try parseJob(jobBody(["push_type": #""alert""#])).apns.pushType == .alert)
    }
}
