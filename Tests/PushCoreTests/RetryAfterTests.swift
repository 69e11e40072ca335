import Testing
@testable import PushCore

private let now = 1_700_000_000

@Suite("RetryAfter: delta-seconds and HTTP-dates (RFC 9110 §10.2.3)")
struct RetryAfterTests {
    @Test("delta-seconds", arguments: [("0", 0), ("1", 1), ("120", 120), (" 30 ", 30)] as [(String, Int64)])
    func deltaSeconds(_ text: String, _ seconds: Int64) {
        #expect(RetryAfter.delay(text, now: now) == .seconds(seconds))
    }

    @Test("the three HTTP-date forms, read against now (1700000000 = Tue, 14 Nov 2023 22:13:20 GMT)", arguments: [
        "Tue, 14 Nov 2023 22:14:20 GMT", "Tuesday, 14-Nov-23 22:14:20 GMT", "Tue Nov 14 22:14:20 2023",
    ])
    func dates(_ text: String) {
        #expect(RetryAfter.delay(text, now: now) == .seconds(60))
    }

    @Test("a date in the past is no wait; a wait beyond a day is capped")
    func bounds() {
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .zero)
        #expect(RetryAfter.delay("999999", now: now) == .seconds(86_400))
        #expect(RetryAfter.delay("99999999999999999999", now: now) == .seconds(86_400))
    }

    @Test("anything else is no Retry-After", arguments: ["", "soon", "-5", "1.5", "Tue, 14 Nov 2023 25:14:20 GMT", "Tue, 14 Foo 2023 22:14:20 GMT"])
    func invalid(_ text: String) {
        #expect(RetryAfter.delay(text, now: now) == nil)
    }

    @Test("days from civil matches known dates")
    func civil() {
        #expect(HTTPDate.daysFromCivil(year: 1970, month: 1, day: 1) == 0)
        #expect(HTTPDate.daysFromCivil(year: 2000, month: 3, day: 1) == 11_017)
        #expect(HTTPDate.daysFromCivil(year: 2023, month: 11, day: 14) * 86_400 + 22 * 3600 + 13 * 60 + 20 == now)
    }
}
