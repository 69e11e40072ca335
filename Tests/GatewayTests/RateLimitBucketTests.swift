import Gateway
import Testing

struct RateLimitBucketTests {
    @Test func theBurstIsTakenThenRefusedUntilATokenIsBack() {
        var bucket = RateLimitBucket(rate: 2, burst: 3, now: .zero)
        #expect((0..<3).map { _ in bucket.take(now: .zero) } == [.allowed, .allowed, .allowed])
        #expect(bucket.take(now: .zero) == .refused(retryAfterSeconds: 1))
        // Half a second at 2 a second brings one token back, and only one.
        #expect(bucket.take(now: .milliseconds(500)) == .allowed)
        #expect(bucket.take(now: .milliseconds(500)) == .refused(retryAfterSeconds: 1))
    }

    @Test func retryAfterRoundsUpToWholeSeconds() {
        // One token every 10 s (rate 1 is the floor; a burst of 1 empties at once): the wait is
        // what remains of the second, never 0.
        var bucket = RateLimitBucket(rate: 1, burst: 1, now: .zero)
        #expect(bucket.take(now: .zero) == .allowed)
        #expect(bucket.take(now: .milliseconds(100)) == .refused(retryAfterSeconds: 1))
        #expect(bucket.take(now: .milliseconds(1000)) == .allowed)
    }

    @Test func aLongIdleRefillsToTheBurstOnly() {
        var bucket = RateLimitBucket(rate: 1000, burst: 5, now: .zero)
        for _ in 0..<5 { _ = bucket.take(now: .zero) }
        // Years of idle time: the refill is widened, not overflowed, and capped at the burst.
        let later = Duration.seconds(Int64.max / 2)
        #expect((0..<5).map { _ in bucket.take(now: later) }.allSatisfy { $0 == .allowed })
        #expect(bucket.take(now: later) == .refused(retryAfterSeconds: 1))
    }

    @Test func timeGoingBackwardsRefillsNothing() {
        var bucket = RateLimitBucket(rate: 10, burst: 1, now: .seconds(5))
        #expect(bucket.take(now: .seconds(5)) == .allowed)
        #expect(bucket.take(now: .seconds(4)) == .refused(retryAfterSeconds: 1))
    }

    @Test func aBucketIsFullOnceItHasRefilledToItsBurst() {
        var bucket = RateLimitBucket(rate: 2, burst: 3, now: .zero)
        #expect(bucket.isFull(now: .zero))
        _ = bucket.take(now: .zero)
        _ = bucket.take(now: .zero)
        #expect(!bucket.isFull(now: .milliseconds(999)))
        #expect(bucket.isFull(now: .seconds(1)))
        #expect(bucket.isFull(now: .seconds(Int64.max / 2)))
    }

    @Test func aRateOfOneLeftForAgesRefillsToItsBurst() {
        // At rate 1 the refill does not overflow, but adding it to the tokens left would.
        var bucket = RateLimitBucket(rate: 1, burst: 1000, now: .zero)
        _ = bucket.take(now: .zero)
        let later = Duration.seconds(Int64.max / 1_000_000 - 1)
        #expect((0..<1000).map { _ in bucket.take(now: later) }.allSatisfy { $0 == .allowed })
        #expect(bucket.take(now: later) == .refused(retryAfterSeconds: 1))
    }
}
