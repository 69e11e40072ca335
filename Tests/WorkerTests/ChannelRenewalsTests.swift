import Testing
@testable import Worker

@Suite struct ChannelRenewalsTests {
    @Test func atMostOncePerInterval() {
        let renewals = ChannelRenewals(interval: .seconds(5))
        let start = ContinuousClock.now
        #expect(renewals.mayRenew(now: start))
        #expect(!renewals.mayRenew(now: start + .seconds(1)))
        #expect(!renewals.mayRenew(now: start + .milliseconds(4999)))
        #expect(renewals.mayRenew(now: start + .seconds(5)))
        #expect(!renewals.mayRenew(now: start + .seconds(6)))
    }
}
