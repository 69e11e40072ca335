import Testing
@testable import PushCore

@Suite("DurationText")
struct DurationTextTests {
    @Test("parse", arguments: [
        ("250ms", Duration.milliseconds(250)), ("1s", .seconds(1)), ("2m", .seconds(120)), ("1h", .seconds(3600)),
        ("1.5s", .milliseconds(1500)), ("0.5h", .seconds(1800)), ("30", .seconds(30)), ("0.25", .milliseconds(250)),
        ("0s", .zero), ("0ms", .zero), (" 5s ", .seconds(5)), ("10m", .seconds(600)),
    ])
    func parse(_ text: String, _ expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test("parse rejects", arguments: ["abc", "", " ", "s", "ms", "h", "-1s", "-5", "5x", "5 s", "1.5.2s", "5sec", "1d", "nan", "nans"])
    func parseRejects(_ text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    // .bug("DurationText.parse traps on infinite or huge values: Int64(Double) of inf / 1e30 overflows")
    @Test("an infinite or huge value is rejected, not a crash")
    func hugeValues() async {
        await #expect(processExitsWith: .success) {
            precondition(DurationText.parse("inf") == nil)
            precondition(DurationText.parse("1e30s") == nil)
        }
    }

    @Test("format: the shortest exact spelling", arguments: [
        (Duration.milliseconds(250), "250ms"), (.seconds(1), "1s"), (.seconds(30), "30s"), (.seconds(90), "90s"),
        (.seconds(120), "2m"), (.seconds(600), "10m"), (.seconds(5400), "90m"), (.seconds(3600), "1h"),
        (.seconds(7200), "2h"), (.milliseconds(1500), "1500ms"), (.zero, "0ms"), (.milliseconds(60_001), "60001ms"),
    ])
    func format(_ duration: Duration, _ expected: String) {
        #expect(DurationText.format(duration) == expected)
        #expect(DurationText.parse(expected) == duration, "format and parse agree")
    }

    @Test("milliseconds")
    func milliseconds() {
        #expect(DurationText.milliseconds(.milliseconds(1500)) == 1500)
        #expect(DurationText.milliseconds(.seconds(600)) == 600_000)
        #expect(DurationText.milliseconds(.microseconds(2_999)) == 2)
        #expect(DurationText.milliseconds(.zero) == 0)
    }
}

@Suite("RetryPolicy")
struct RetryPolicyTests {
    @Test("defaults: 1 s, 5 s, 30 s, 2 min, 10 min, then give up")
    func defaults() {
        let policy = RetryPolicy()
        #expect(policy.delays == [.seconds(1), .seconds(5), .seconds(30), .seconds(120), .seconds(600)])
        #expect(policy.jobQueue == "push.jobs")
        #expect(policy.maxAttempts == 6)
    }

    @Test("delayQueue(afterAttempts:) for each attempt of the default policy", arguments: [
        (1, "push.jobs.retry.1s", Duration.seconds(1)), (2, "push.jobs.retry.5s", .seconds(5)),
        (3, "push.jobs.retry.30s", .seconds(30)), (4, "push.jobs.retry.2m", .seconds(120)),
        (5, "push.jobs.retry.10m", .seconds(600)),
    ])
    func delayQueue(_ attempts: Int, _ name: String, _ delay: Duration) throws {
        let queue = try #require(RetryPolicy().delayQueue(afterAttempts: attempts))
        #expect(queue.name == name)
        #expect(queue.delay == delay)
    }

    @Test("Retry-After: the ladder's delay when it is long enough, else the shortest declared delay that is, else the longest", arguments: [
        (1, Duration?.none, Duration.seconds(1)), (1, .milliseconds(800), .seconds(1)), (1, .seconds(3), .seconds(5)),
        (1, .seconds(60), .seconds(120)), (2, .seconds(5), .seconds(5)), (4, .seconds(30), .seconds(120)),
        (1, .seconds(3600), .seconds(600)), (5, .seconds(3600), .seconds(600)),
    ])
    func delayQueueAtLeast(_ attempts: Int, _ retryAfter: Duration?, _ expected: Duration) throws {
        let queue = try #require(RetryPolicy().delayQueue(afterAttempts: attempts, atLeast: retryAfter))
        #expect(queue.delay == expected)
        #expect(queue.name == "push.jobs.retry.\(DurationText.format(expected))")
    }

    @Test("Retry-After does not give a device a try beyond the ladder")
    func retryAfterKeepsTheLadderLength() {
        #expect(RetryPolicy().delayQueue(afterAttempts: 6, atLeast: .seconds(1)) == nil)
    }

    @Test("no delay queue before the first attempt or once retries are used up", arguments: [-1, 0, 6, 7, 1000])
    func exhausted(_ attempts: Int) {
        #expect(RetryPolicy().delayQueue(afterAttempts: attempts) == nil)
    }

    @Test("a custom policy: its own queue and delays")
    func custom() throws {
        let policy = RetryPolicy(delays: [.milliseconds(250), .milliseconds(1500), .seconds(3600)], jobQueue: "jobs")
        #expect(policy.maxAttempts == 4)
        #expect(policy.queueNames.map(\.name) == ["jobs.retry.250ms", "jobs.retry.1500ms", "jobs.retry.1h"])
        #expect(policy.queueNames.map(\.delay) == policy.delays)
        #expect(try #require(policy.delayQueue(afterAttempts: 3)).name == "jobs.retry.1h")
        #expect(policy.delayQueue(afterAttempts: 4) == nil)
    }

    @Test("no delays: one attempt, no retry queue")
    func noRetries() {
        let policy = RetryPolicy(delays: [])
        #expect(policy.maxAttempts == 1)
        #expect(policy.delayQueue(afterAttempts: 1) == nil)
        #expect(policy.queueNames.isEmpty)
    }

    @Test("queueNames lists every delay queue of the default policy in order")
    func queueNames() {
        #expect(RetryPolicy().queueNames.map(\.name) == [
            "push.jobs.retry.1s", "push.jobs.retry.5s", "push.jobs.retry.30s", "push.jobs.retry.2m", "push.jobs.retry.10m",
        ])
    }
}
