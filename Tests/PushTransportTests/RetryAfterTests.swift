import PushTransport
import Testing

@Suite struct RetryAfterTests {
    @Test(arguments: [("120", Duration.seconds(120)), ("0", .zero), (" 5", .seconds(5)), ("999999999", RetryAfter.longest)])
    func delaySeconds(_ text: String, _ expected: Duration) {
        #expect(RetryAfter.parse(text, now: 0) == expected)
    }

    @Test func anHTTPDateCountsFromNow() {
        // 1994-11-06 08:49:37 UTC is 784111777 (RFC 9110's example date).
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_777 - 90) == .seconds(90))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_777 + 90) == .zero, "a date past is no wait")
        #expect(RetryAfter.parse("Thu, 26 Nov 2026 03:00:00 GMT", now: 1_795_658_400) == .seconds(3600))
    }

    @Test(arguments: ["", "soon", "-5", "12abc", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT"])
    func nonsenseSaysNothing(_ text: String) {
        #expect(RetryAfter.parse(text, now: 0) == nil)
    }
}
