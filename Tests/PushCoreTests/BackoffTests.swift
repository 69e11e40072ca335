import Testing
@testable import PushCore

/// Reconnect delays of the AMQP client and the APNs connection pool.
@Suite struct BackoffTests {
    @Test func backoffGrowsCapsAndJitters() {
        var backoff = Backoff(range: .milliseconds(200) ... .seconds(1))
        let delays = (0..<5).map { _ in backoff.next(jitter: { $0.upperBound }) }
        #expect(delays == [.milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        backoff.reset()
        #expect(backoff.next(jitter: { $0.lowerBound }) == .milliseconds(100))
    }

    @Test func backoffDoublesToTheCapAndResets() {
        // The APNs connection pool's range.
        var backoff = Backoff(range: .milliseconds(100) ... .seconds(5))
        let delays = (0..<9).map { _ in backoff.next(jitter: { $0.upperBound }) }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                           .milliseconds(1600), .milliseconds(3200), .seconds(5), .seconds(5), .seconds(5)])
        backoff.reset()
        #expect(backoff.next(jitter: { $0.upperBound }) == .milliseconds(100))
    }
}
