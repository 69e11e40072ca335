import AMQP
import PushCore
import Testing
@testable import Worker

/// The grace of a job for an app the worker does not serve, decided from its header and a time
/// given by the test: no clock is read.
@Suite struct UnknownAppGraceTests {
    let grace = UnknownAppGrace(grace: .seconds(300))
    let now = UnixTime(milliseconds: 1_700_000_000_000)
    let longest: Duration = .seconds(30)

    func at(_ offset: Duration) -> UnixTime {
        UnixTime(milliseconds: now.milliseconds + DurationText.milliseconds(offset))
    }

    @Test func theFirstLookBeginsAHoldStampedNow() {
        #expect(grace.verdict(firstSeen: nil, now: now, longestDelay: longest) == .hold(firstSeen: now, longestDelay: longest, begins: true))
    }

    @Test func laterLooksKeepTheFirstTimeAndAreNotLoggedAgain() {
        let header = AMQPFieldValue.int(now.milliseconds)
        #expect(grace.verdict(firstSeen: header, now: at(.seconds(10)), longestDelay: longest)
            == .hold(firstSeen: now, longestDelay: longest, begins: false))
        // The last wait ends at the grace's end, not a whole delay after it.
        #expect(grace.verdict(firstSeen: header, now: at(.seconds(290)), longestDelay: longest)
            == .hold(firstSeen: now, longestDelay: .seconds(10), begins: false))
    }

    @Test func rejectedOnceTheGraceIsOver() {
        let header = AMQPFieldValue.int(now.milliseconds)
        #expect(grace.verdict(firstSeen: header, now: at(.milliseconds(299_999)), longestDelay: longest) != .reject)
        #expect(grace.verdict(firstSeen: header, now: at(.seconds(300)), longestDelay: longest) == .reject)
        #expect(grace.verdict(firstSeen: header, now: at(.seconds(86_400)), longestDelay: longest) == .reject)
    }

    @Test func noGraceRejectsAtOnceAsBefore() {
        let none = UnknownAppGrace(grace: .zero)
        #expect(none.verdict(firstSeen: nil, now: now, longestDelay: longest) == .reject)
        #expect(none.verdict(firstSeen: .int(now.milliseconds), now: now, longestDelay: longest) == .reject)
    }

    @Test func aGraceShorterThanTheLongestDelayBoundsTheFirstWait() {
        let short = UnknownAppGrace(grace: .seconds(2))
        #expect(short.verdict(firstSeen: nil, now: now, longestDelay: longest) == .hold(firstSeen: now, longestDelay: .seconds(2), begins: true))
    }

    /// A first-seen time ahead of this worker's clock (another worker's runs ahead, or the header
    /// was forged) counts as now: skew can shorten the grace, never stretch it.
    @Test func aFirstSeenTimeAheadCountsAsNow() {
        let ahead = AMQPFieldValue.int(at(.seconds(3600)).milliseconds)
        #expect(grace.verdict(firstSeen: ahead, now: now, longestDelay: longest) == .hold(firstSeen: now, longestDelay: longest, begins: false))
        #expect(grace.verdict(firstSeen: .int(.max), now: now, longestDelay: longest) == .hold(firstSeen: now, longestDelay: longest, begins: false))
    }

    @Test func aHeaderOfAnotherTypeOrFromLongAgoCannotHoldForEver() {
        // Not a number: taken as the first look, and stamped afresh.
        #expect(grace.verdict(firstSeen: .string("yesterday"), now: now, longestDelay: longest)
            == .hold(firstSeen: now, longestDelay: longest, begins: true))
        #expect(grace.verdict(firstSeen: .int(.min), now: now, longestDelay: longest) == .reject)
    }
}
