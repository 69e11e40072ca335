@testable import HTTP2
import Testing

/// The per-connection limit on its own clock: a sender that starts a request whenever it is
/// allowed never puts more than `perSecond` starts in any one-second window, and keeps the rate up.
@Suite struct RequestRateTests {
    @Test(arguments: [1, 7, 20, 300])
    func aGreedySenderNeverExceedsTheRateInAnyWindow(perSecond: Int) {
        let origin = ContinuousClock.now
        var rate = RequestRate(perSecond: perSecond)
        var starts: [ContinuousClock.Instant] = []
        // Ten seconds in steps of 7 ms (not a divisor of the second): start whatever is allowed.
        var now = origin
        while now < origin + .seconds(10) {
            while rate.allows(now: now) {
                rate.started(now: now)
                starts.append(now)
            }
            #expect(rate.nextStart(now: now).map { $0 > now } == true)
            now += .milliseconds(7)
        }
        var windowStart = 0
        var most = 0
        for index in starts.indices {
            while starts[index] - starts[windowStart] >= .seconds(1) { windowStart += 1 }
            most = max(most, index - windowStart + 1)
        }
        #expect(most == perSecond, "most starts in any one second: \(most)")
        // Held to the rate, not below it: ten windows' worth, less one step's lag a window at most.
        #expect(starts.count >= 10 * perSecond - perSecond / 2 - 1 && starts.count <= 10 * perSecond, "\(starts.count) starts")
    }
}
