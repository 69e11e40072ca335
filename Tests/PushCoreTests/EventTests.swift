import Foundation
import Synchronization
import Testing
@testable import PushCore

/// Milliseconds since the epoch for a UTC civil time, by counting days year by year and month by month
/// (deliberately not the algorithm UnixTime uses).
func epochMilliseconds(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0,
                       _ millisecond: Int = 0) -> Int64 {
    func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }
    var days = 0
    for y in 1970..<year { days += isLeap(y) ? 366 : 365 }
    let monthLengths = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    days += monthLengths.prefix(month - 1).reduce(0, +)
    days += day - 1
    let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
    return Int64(seconds) * 1000 + Int64(millisecond)
}

@Suite("UnixTime")
struct UnixTimeTests {
    @Test("the helper agrees with known instants")
    func helper() {
        #expect(epochMilliseconds(1970, 1, 1) == 0)
        #expect(epochMilliseconds(2000, 2, 29) == 951_782_400_000)
        #expect(epochMilliseconds(2026, 11, 21, 20, 39, 0, 123) == 1_795_293_540_123)
        #expect(epochMilliseconds(2038, 1, 19, 3, 14, 8) == 2_147_483_648_000)
    }

    @Test("rfc3339 for known instants", arguments: [
        ("1970-01-01T00:00:00.000Z", epochMilliseconds(1970, 1, 1)),
        ("1970-01-01T00:00:00.001Z", 1),
        ("1970-01-01T00:00:01.000Z", 1000),
        ("1970-01-02T00:00:00.000Z", 86_400_000),
        ("1999-12-31T23:59:59.999Z", epochMilliseconds(1999, 12, 31, 23, 59, 59, 999)),
        ("2000-02-29T00:00:00.000Z", epochMilliseconds(2000, 2, 29)),
        ("2000-03-01T00:00:00.000Z", epochMilliseconds(2000, 3, 1)),
        ("2024-02-29T12:34:56.789Z", epochMilliseconds(2024, 2, 29, 12, 34, 56, 789)),
        ("2026-11-21T20:39:00.123Z", epochMilliseconds(2026, 11, 21, 20, 39, 0, 123)),
        ("2026-12-31T23:59:59.999Z", epochMilliseconds(2026, 12, 31, 23, 59, 59, 999)),
        ("2038-01-19T03:14:08.000Z", epochMilliseconds(2038, 1, 19, 3, 14, 8)),
        ("2100-02-28T23:59:59.000Z", epochMilliseconds(2100, 2, 28, 23, 59, 59)),
        ("2100-03-01T00:00:00.000Z", epochMilliseconds(2100, 3, 1)),
        ("2400-02-29T00:00:00.050Z", epochMilliseconds(2400, 2, 29, 0, 0, 0, 50)),
        ("0999-12-31T23:59:59.999Z", -30_610_224_000_001),
        ("1969-12-31T23:59:59.999Z", -1),
        ("10000-01-01T00:00:00.000Z", 253_402_300_800_000),
    ])
    func rfc3339(_ expected: String, _ milliseconds: Int64) {
        #expect(UnixTime(milliseconds: milliseconds).rfc3339 == expected)
    }

    @Test("every day of 1970…2101 starts at midnight of the right date")
    func everyDay() {
        var failures = 0
        for year in 1970...2101 {
            for month in 1...12 {
                for day in [1, 28, 29, 30, 31] {
                    // Skip dates that do not exist (the helper would roll them into the next month).
                    guard day <= Self.length(year, month) else { continue }
                    let ms = epochMilliseconds(year, month, day)
                    let expected = "\(year)-\(pad(month))-\(pad(day))T00:00:00.000Z"
                    if UnixTime(milliseconds: ms).rfc3339 != expected { failures += 1 }
                }
            }
        }
        #expect(failures == 0)
    }

    private func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    static func length(_ year: Int, _ month: Int) -> Int {
        Int((epochMilliseconds(month == 12 ? year + 1 : year, month == 12 ? 1 : month + 1, 1) - epochMilliseconds(year, month, 1)) / 86_400_000)
    }

    @Test("seconds truncates the milliseconds")
    func seconds() {
        #expect(UnixTime(milliseconds: 1_795_293_540_999).seconds == 1_795_293_540)
        #expect(UnixTime(milliseconds: 0).seconds == 0)
    }

    @Test("now() is the wall clock")
    func now() {
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let now = UnixTime.now().milliseconds
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(now >= before - 1 && now <= after + 1)
    }
}

@Suite("PushEvent")
struct PushEventTests {
    static let time = UnixTime(milliseconds: epochMilliseconds(2026, 11, 21, 20, 39, 0, 123))

    @Test("routing keys")
    func routingKeys() {
        #expect(PushEvent.tokenInvalid(token: "t", reason: "r", status: 410, timestamp: nil).routingKey == "token.invalid")
        #expect(PushEvent.deliveryFailed(token: "t", status: 400, reason: "r", attempts: 1).routingKey == "delivery.failed")
        #expect(PushEvent.jobRejected(error: "e", field: nil).routingKey == "job.rejected")
        #expect(PushEvent.jobCompleted(JobCounts()).routingKey == "job.completed")
    }

    /// The fields every event carries: `event`, `job_id`, `app`, `time`.
    private func checkCommon(_ object: [String: Any], event: String, jobID: String?, app: String?) {
        #expect(object["event"] as? String == event)
        if let jobID { #expect(object["job_id"] as? String == jobID) } else { #expect(object["job_id"] is NSNull) }
        if let app { #expect(object["app"] as? String == app) } else { #expect(object["app"] is NSNull) }
        #expect(object["time"] as? String == "2026-11-21T20:39:00.123Z")
    }

    @Test("token.invalid: token, reason, status and the 410 timestamp in milliseconds")
    func tokenInvalid() throws {
        let event = PushEvent.tokenInvalid(token: Tok.a, reason: "Unregistered", status: 410, timestamp: 1_795_000_000_456)
        let object = try jsonObject(event.body(jobID: "job-1", app: "shop", time: Self.time))
        checkCommon(object, event: "token.invalid", jobID: "job-1", app: "shop")
        #expect(object["token"] as? String == Tok.a)
        #expect(object["reason"] as? String == "Unregistered")
        #expect(object["status"] as? Int == 410)
        #expect(object["timestamp"] as? Int == 1_795_000_000_456)
        #expect(Set(object.keys) == ["event", "job_id", "app", "time", "token", "reason", "status", "timestamp"])
    }

    @Test("token.invalid and delivery.failed name the request's apns-id when one was sent")
    func requestIDs() throws {
        let id = "9f3c1a2b-0d4e-4f5a-8b6c-7d8e00000002"
        let invalid = try jsonObject(PushEvent.tokenInvalid(token: Tok.a, reason: "Unregistered", status: 410, timestamp: nil, requestID: id)
            .body(jobID: "j", app: "a", time: Self.time))
        #expect(invalid["apns_id"] as? String == id)
        #expect(invalid["message_id"] as? String == id, "the platform-neutral name, for every platform")
        let failed = try jsonObject(PushEvent.deliveryFailed(token: Tok.a, status: 500, reason: "InternalServerError", attempts: 3, requestID: id)
            .body(jobID: "j", app: "a", time: Self.time))
        #expect(failed["apns_id"] as? String == id)
        var counts = JobCounts()
        counts.firstRequestID = "9f3c1a2b-0d4e-4f5a-8b6c-7d8e00000000"
        counts.lastRequestID = id
        let completed = try jsonObject(PushEvent.jobCompleted(counts).body(jobID: "j", app: "a", time: Self.time))
        #expect(completed["apns_id_first"] as? String == counts.firstRequestID)
        #expect(completed["apns_id_last"] as? String == id)
        let unsent = try jsonObject(PushEvent.jobCompleted(JobCounts()).body(jobID: "j", app: "a", time: Self.time))
        #expect(unsent["apns_id_first"] == nil, "nothing was sent (expired): no range")
    }

    @Test("job.completed names how many messages a service keeps for less than asked, and the shortest")
    func shortenedTTLs() throws {
        var counts = JobCounts()
        counts.sent = 3
        counts.shortenedTTL(600)
        counts.shortenedTTL(60)
        let completed = try jsonObject(PushEvent.jobCompleted(counts).body(jobID: "j", app: "w", time: Self.time))
        #expect(completed["ttl_shortened"] as? Int == 2)
        #expect(completed["shortest_ttl"] as? Int == 60)
        let asAsked = try jsonObject(PushEvent.jobCompleted(JobCounts()).body(jobID: "j", app: "w", time: Self.time))
        #expect(asAsked["ttl_shortened"] == nil && asAsked["shortest_ttl"] == nil)
    }

    @Test("a platform that names messages itself (a Web Push Location) fills message_id only")
    func messageIDsOfOtherPlatforms() throws {
        let location = "https://push.example/m/abc"
        let invalid = try jsonObject(PushEvent.tokenInvalid(token: "https://push.example/wp/1", reason: "Gone", status: 410, timestamp: nil,
                                                            requestID: location, isAPNsID: false).body(jobID: "j", app: "w", time: Self.time))
        #expect(invalid["message_id"] as? String == location)
        #expect(invalid["apns_id"] == nil)
        let failed = try jsonObject(PushEvent.deliveryFailed(token: "t", status: 413, reason: "PayloadTooLarge", attempts: 1, isAPNsID: false)
            .body(jobID: "j", app: "w", time: Self.time))
        #expect(failed["message_id"] == nil && failed["apns_id"] == nil, "no id when the service named none")
    }

    @Test("token.invalid without a timestamp (400 BadDeviceToken) writes null")
    func tokenInvalidNoTimestamp() throws {
        let event = PushEvent.tokenInvalid(token: Tok.b, reason: "BadDeviceToken", status: 400, timestamp: nil)
        let object = try jsonObject(event.body(jobID: nil, app: nil, time: Self.time))
        checkCommon(object, event: "token.invalid", jobID: nil, app: nil)
        #expect(object["timestamp"] is NSNull)
        #expect(object["status"] as? Int == 400)
    }

    @Test("delivery.failed: token, status, reason, attempts")
    func deliveryFailed() throws {
        let event = PushEvent.deliveryFailed(token: Tok.c, status: 503, reason: "ServiceUnavailable", attempts: 6)
        let object = try jsonObject(event.body(jobID: "j", app: "default", time: Self.time))
        checkCommon(object, event: "delivery.failed", jobID: "j", app: "default")
        #expect(object["token"] as? String == Tok.c)
        #expect(object["status"] as? Int == 503)
        #expect(object["reason"] as? String == "ServiceUnavailable")
        #expect(object["attempts"] as? Int == 6)
        #expect(Set(object.keys) == ["event", "job_id", "app", "time", "token", "status", "reason", "attempts"])
    }

    @Test("job.rejected: the error and the field, escaped")
    func jobRejected() throws {
        let rejection = JobRejection(field: "tokens[2]", "not a device token: \"x\"\n")
        let event = PushEvent.jobRejected(error: rejection.description, field: rejection.field)
        let object = try jsonObject(event.body(jobID: "j", app: nil, time: Self.time))
        checkCommon(object, event: "job.rejected", jobID: "j", app: nil)
        #expect(object["error"] as? String == "tokens[2]: not a device token: \"x\"\n")
        #expect(object["field"] as? String == "tokens[2]")

        let whole = try jsonObject(PushEvent.jobRejected(error: "not JSON", field: nil).body(jobID: nil, app: nil, time: Self.time))
        #expect(whole["error"] as? String == "not JSON")
        #expect(whole["field"] is NSNull)
    }

    @Test("job.completed: every count as an integer")
    func jobCompleted() throws {
        var counts = JobCounts()
        counts.devices = 10
        counts.sent = 6
        counts.failed = 1
        counts.invalid = 2
        counts.retried = 1
        counts.chunks = 3
        counts.chunk = 4
        counts.attempt = 2
        counts.durationMilliseconds = 1234
        let object = try jsonObject(PushEvent.jobCompleted(counts).body(jobID: "j", app: "a", time: Self.time))
        checkCommon(object, event: "job.completed", jobID: "j", app: "a")
        let expected = ["devices": 10, "sent": 6, "failed": 1, "invalid": 2, "retried": 1, "chunks": 3, "chunk": 4,
                        "attempt": 2, "duration_ms": 1234]
        for (key, value) in expected {
            #expect(object[key] as? Int == value, "\(key)")
            #expect(!(object[key] is String), "\(key) is a number")
        }
        #expect(Set(object.keys) == Set(expected.keys).union(["event", "job_id", "app", "time"]))
    }

    @Test("job.completed byte for byte: names, order, punctuation, escapes, a null job id")
    func jobCompletedBytes() {
        var counts = JobCounts()
        counts.devices = 12
        counts.sent = 11
        counts.failed = -1
        counts.durationMilliseconds = 1234
        counts.firstRequestID = "a\"b"
        counts.lastRequestID = "c"
        let body = PushEvent.jobCompleted(counts).body(jobID: nil, app: "x\\y", time: Self.time)
        #expect(String(decoding: body, as: UTF8.self) == #"{"event":"job.completed","job_id":null,"app":"x\\y","#
            + #""time":"2026-11-21T20:39:00.123Z","chunk":null,"devices":12,"sent":11,"failed":-1,"invalid":0,"#
            + #""retried":0,"chunks":0,"attempt":1,"duration_ms":1234,"apns_id_first":"a\"b","apns_id_last":"c"}"#)
    }

    @Test("job.completed for an unchunked job: chunk is null, defaults are zero and attempt 1")
    func jobCompletedDefaults() throws {
        let object = try jsonObject(PushEvent.jobCompleted(JobCounts()).body(jobID: "j", app: "a", time: Self.time))
        #expect(object["chunk"] is NSNull)
        #expect(object["attempt"] as? Int == 1)
        for key in ["devices", "sent", "failed", "invalid", "retried", "chunks", "duration_ms"] {
            #expect(object[key] as? Int == 0, "\(key)")
        }
    }
}

@Suite struct JobIDTests {
    @Test func uuidTextWritesBothHalvesInOrder() {
        #expect(UUIDText.format(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210) == "01234567-89ab-cdef-fedc-ba9876543210")
        #expect(UUIDText.format(high: 0, low: .max) == "00000000-0000-0000-ffff-ffffffffffff")
    }

    @Test func generatedIDsAreDistinctLowercaseUUIDsThatFoundationReadsBack() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = JobID.next()
            #expect(id.count == 36)
            #expect(id == id.lowercased())
            let uuid = UUID(uuidString: id)
            #expect(uuid != nil, "\(id)")
            #expect(uuid?.uuidString.lowercased() == id)
            let characters = Array(id)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    /// The counter wraps (an `add` would trap and stop the process): ids go on past its end, still
    /// distinct from the ones just before and still UUIDs.
    @Test func theCounterWrapsAtItsEnd() throws {
        let counter = Atomic<UInt64>(.max - 2)
        let ids = (0..<4).map { _ in JobID.next(countingIn: counter) }
        #expect(Set(ids).count == 4)
        for id in ids { #expect(UUID(uuidString: id)?.uuidString.lowercased() == id, "\(id)") }
        #expect(counter.load(ordering: .relaxed) == 1)
    }
}
