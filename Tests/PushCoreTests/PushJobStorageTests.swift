import APNsCore
import Testing
@testable import PushCore

/// `PushJob` keeps its fields in one shared object: copies share it, a change makes a new one.
@Suite struct PushJobStorageTests {
    static let base = PushJob(id: "j", app: "a", tokens: [DeviceToken(trustedHex: Tok.a)], groups: ["g"], pushType: .alert,
                              expiration: 100, payload: Array(#"{"aps":{}}"#.utf8), attempts: 1, chunk: 2)

    /// One change to each field; every one makes a job unequal to the base (and hashed apart).
    static let changes: [(field: String, change: @Sendable (inout PushJob) -> Void)] = [
        ("id", { $0.id = "k" }),
        ("app", { $0.app = "b" }),
        ("tokens", { $0.tokens = [DeviceToken(trustedHex: Tok.c)] }),
        ("groups", { $0.groups = [] }),
        ("sourceGroups", { $0.sourceGroups = ["s"] }),
        ("bulk", { $0.bulk = true }),
        ("expiration", { $0.expiration = 0 }),
        ("options", { $0.options = APNsJobOptions(pushType: .background, priority: 10, collapseID: nil, topic: nil) }),
        ("payload", { $0.payload = Array("{}".utf8) }),
        ("attempts", { $0.attempts = 2 }),
        ("chunk", { $0.chunk = nil }),
    ]

    @Test func everyFieldTakesPartInEqualityAndHashing() {
        var seen: Set<PushJob> = [Self.base]
        for (field, change) in Self.changes {
            var job = Self.base
            change(&job)
            #expect(job != Self.base, "\(field)")
            #expect(seen.insert(job).inserted, "\(field)")
        }
        let rebuilt = PushJob(id: "j", app: "a", tokens: [DeviceToken(trustedHex: Tok.a)], groups: ["g"], pushType: .alert,
                              expiration: 100, payload: Array(#"{"aps":{}}"#.utf8), attempts: 1, chunk: 2)
        #expect(rebuilt == Self.base && rebuilt.hashValue == Self.base.hashValue, "equal fields, equal jobs")
    }

    @Test func aChangedCopyLeavesTheOriginalAlone() {
        let original = Self.base
        var copy = original
        copy.attempts = 7
        copy.chunk = nil
        #expect(original.attempts == 1 && original.chunk == 2)
        #expect(copy.attempts == 7 && copy.chunk == nil && copy.id == "j")
        let retry = original.derived(tokens: [DeviceToken(trustedHex: Tok.c)], attempts: 2, chunk: nil)
        #expect(retry.groups.isEmpty && retry.attempts == 2 && retry.chunk == nil && retry.tokens.map(\.identity) == [Tok.c])
        #expect(original.groups == ["g"] && original.tokens.map(\.identity) == [Tok.a])
    }
}

/// Chunk and retry jobs remember the groups their devices came from, through their JSON too.
@Suite struct SourceGroupsTests {
    @Test func derivedJobsKeepTheGroupsTheirDevicesCameFrom() throws {
        let parser = JobParser.apns
        let original = try parser.parse(Array(#"{"id":"j","groups":["a","b"],"payload":{"aps":{}}}"#.utf8), messageID: nil, now: 0, makeID: { "x" })
        let token = DeviceToken(trustedHex: Tok.a)
        let chunk = original.derived(tokens: [token], attempts: 0, chunk: 0)
        #expect(chunk.groups.isEmpty && chunk.sourceGroups == ["a", "b"])
        let retry = chunk.derived(tokens: [token], attempts: 1, chunk: 0)
        #expect(retry.prunableGroups == ["a", "b"])
        let reparsed = try parser.parse(retry.encoded(), messageID: nil, now: 0, makeID: { "x" })
        #expect(reparsed.groups.isEmpty && reparsed.sourceGroups == ["a", "b"])
        #expect(!original.bulk && chunk.bulk && retry.bulk && reparsed.bulk, "a fan-out's chunks and their retries are bulk")
        let plain = try parser.parse(Array(#"{"tokens":["\#(token.given)"],"payload":{"aps":{}}}"#.utf8), messageID: nil, now: 0, makeID: { "x" })
        #expect(plain.prunableGroups.isEmpty)
    }
}
