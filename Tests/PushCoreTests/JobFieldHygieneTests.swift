import Testing
@testable import PushCore

extension BadJob {
    /// Fields that end up in HTTP/2 headers, AMQP properties or Redis keys (issue 17, item 5).
    static let hygiene: [BadJob] = [
        BadJob("id with a newline", ["id": #""ab\ncd""#], field: "id", "contains a control character (0x0A) at byte 2"),
        BadJob("id with a newline after an emoji", ["id": #""😀\n""#], field: "id", "(0x0A) at byte 4"),
        BadJob("app with a tab", ["app": #""a\tb""#], field: "app", "contains a control character (0x09) at byte 1"),
        BadJob("collapse_id with NUL", ["collapse_id": #""\u0000""#], field: "collapse_id", "contains a control character (0x00) at byte 0"),
        BadJob("topic with U+001F", ["topic": #""com.example\u001f""#], field: "topic", "(0x1F) at byte 11"),
        BadJob("topic with a raw DEL", ["topic": "\"com.\u{7F}example\""], field: "topic", "(0x7F) at byte 4"),
        BadJob("group with a carriage return", ["groups": #"["news","ok","x\ry"]"#], field: "groups[2]", "(0x0D) at byte 1"),
        BadJob("group with DEL after an accent", ["groups": #"["caf\u00e9\u007f"]"#], field: "groups[0]", "(0x7F) at byte 5"),
        BadJob("push_type with a newline", ["push_type": #""alert\n""#], field: "push_type", "contains a control character (0x0A) at byte 5"),
        BadJob("group name 256 bytes of accents", ["groups": #"["\#(String(repeating: "é", count: 128))"]"#],
               field: "groups[0]", "256 bytes", "at most 255"),
        BadJob("1001 groups", ["groups": groupList((0...1000).map { "g\($0)" })], field: "groups", "1001 groups", "at most 1000"),
        BadJob("1001 groups, all the same", ["groups": groupList(Array(repeating: "news", count: 1001))],
               field: "groups", "at most 1000"),
    ]
}

/// A body too large to print as a test argument: the test shows its name.
struct Hostile: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let body: String
    init(_ name: String, _ body: String) {
        testDescription = name
        self.body = body
    }
}

func groupList(_ names: [String]) -> String {
    "[" + names.map { #""\#($0)""# }.joined(separator: ",") + "]"
}

@Suite("JobParser: field hygiene")
struct JobFieldHygieneTests {
    @Test("control characters and lengths are rejected naming the field", arguments: BadJob.hygiene)
    func rejected(_ bad: BadJob) {
        let rejection = #expect(throws: JobRejection.self) { try parseJob(bad.body) }
        guard let rejection else { return }
        #expect(rejection.field == bad.field, "\(rejection)")
        for fragment in bad.fragments {
            #expect(rejection.problem.contains(fragment), "problem \"\(rejection.problem)\" should mention \(fragment)")
        }
    }

    @Test("limits that are accepted: topic 255 bytes, a group name 255 bytes, 1000 groups")
    func boundaries() throws {
        let topic = String(repeating: "t", count: 255)
        let group = String(repeating: "g", count: 255)
        let job = try parseJob(jobBody(["topic": #""\#(topic)""#, "groups": groupList([group])]))
        #expect(job.apns.topic == topic)
        #expect(job.groups == [group])
        let names = (0..<JobParser.maxGroups).map { "g\($0)" }
        #expect(try parseJob(jobBody(["groups": groupList(names)])).groups == names)
    }

    @Test("non-control characters pass: spaces in collapse_id, non-ASCII, U+0080 and U+2028")
    func printableIsFine() throws {
        let job = try parseJob(jobBody(["collapse_id": #""a b é \u0080 \u2028""#, "id": #""job 1""#]))
        #expect(job.apns.collapseID == "a b é \u{80} \u{2028}")
        #expect(job.id == "job 1")
    }

    @Test("duplicates collapse in first-seen order; NFC and NFD spellings are different Redis keys")
    func groupDeduplication() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let job = try parseJob(jobBody(["groups": groupList(["b", nfc, "a", nfd, "b", nfc, "a"])]))
        #expect(job.groups.map { Array($0.utf8) } == ["b", nfc, "a", nfd].map { Array($0.utf8) })

        let names = (0..<500).map { "g\($0)" }
        #expect(try parseJob(jobBody(["groups": groupList(names + names)])).groups == names)
    }

    @Test("an unknown field with a 70,000-character name is named by its first 64 bytes, with its length")
    func hugeUnknownKey() {
        let key = String(repeating: "k", count: 70_000)
        let rejection = #expect(throws: JobRejection.self) { try parseJob(jobBody([key: "1"])) }
        #expect(rejection?.field == String(repeating: "k", count: 64) + "…")
        #expect(rejection?.problem.contains("unknown field") == true)
        #expect(rejection?.problem.contains("70000 bytes") == true)
        // The shown name (64 bytes) and the list of known fields: bounded whatever the input.
        #expect((rejection?.description.utf8.count ?? .max) <= 340)
    }

    @Test("an unknown name is cut at a UTF-8 boundary", arguments: [("é", 32), ("€", 21), ("😀", 16)])
    func unknownKeyCutAtBoundary(_ character: String, _ kept: Int) {
        let rejection = #expect(throws: JobRejection.self) { try parseJob(jobBody([String(repeating: character, count: 40): "1"])) }
        #expect(rejection?.field == String(repeating: character, count: kept) + "…")
    }

    @Test("an unknown name of 64 bytes is named whole; control characters in it are shown escaped")
    func unknownKeyShort() {
        let key = String(repeating: "u", count: 64)
        #expect(throws: JobRejection(field: key, JobParser.apns.unknownField(key).problem)) { try parseJob(jobBody([key: "1"])) }
        let rejection = #expect(throws: JobRejection.self) { try parseJob(jobBody([#"a\nb\u0000"#: "1"])) }
        #expect(rejection?.field == #"a\u000Ab\u0000"#)
    }

    /// Hostile bodies: whatever the input, a rejection's text and field stay small.
    static let hostile: [Hostile] = {
        let huge = String(repeating: "x", count: 70_000)
        let combining = "a" + String(repeating: "\u{301}", count: 70_000) // one Character, 140,001 bytes
        let newlines = String(repeating: #"\n"#, count: 70_000)
        return [
            Hostile("unknown key", jobBody([huge: "1"])),
            Hostile("unknown key of one Character", jobBody([combining: "1"])),
            Hostile("unknown key of newlines", jobBody([newlines: "1"])),
            Hostile("push_type", jobBody(["push_type": #""\#(huge)""#])),
            Hostile("push_type of one Character", jobBody(["push_type": #""\#(combining)""#])),
            Hostile("expiration", jobBody(["expiration": #""+\#(huge)""#])),
            Hostile("expiration of one Character", jobBody(["expiration": #""\#(combining)""#])),
            Hostile("priority of one Character", jobBody(["priority": #""\#(combining)""#])),
            Hostile("attempts of one Character", jobBody(["attempts": #""\#(combining)""#])),
            Hostile("id", jobBody(["id": #""\#(huge)""#])),
            Hostile("app", jobBody(["app": #""\#(huge)""#])),
            Hostile("collapse_id", jobBody(["collapse_id": #""\#(huge)""#])),
            Hostile("topic", jobBody(["topic": #""\#(huge)""#])),
            Hostile("group name", jobBody(["groups": groupList([huge])])),
            Hostile("token", jobBody(["tokens": #"["\#(huge)"]"#])),
            Hostile("5000 groups", jobBody(["groups": groupList((0..<5000).map { "g\($0)" })])),
            Hostile("syntax error after a one-Character member name", #"{"\#(combining)" 1}"#),
        ]
    }()

    @Test("rejection text and field are bounded", arguments: hostile)
    func bounded(_ sample: Hostile) {
        let rejection = #expect(throws: JobRejection.self) { try parseJob(sample.body) }
        guard let rejection else { return }
        #expect(rejection.description.utf8.count <= 340, "\(rejection.description.utf8.count) bytes")
        #expect((rejection.field?.utf8.count ?? 0) <= JobParser.maxShownNameBytes + 3)
    }
}
