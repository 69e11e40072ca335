import APNsCore
import PushCore
import PushTransport
import Testing
@testable import Worker

/// A device whose service is down after having delivered waits without using an attempt, up to
/// `PushJob.maximumOutageWaits` waits; then it is retried as any other, and fails at the ladder's end.
@Suite struct OutageWaitSettlementTests {
    static let device = DeviceToken(identity: "d", given: "d")
    static let down = PushResult(status: 503, reason: "ServiceUnavailable", outcome: .serviceDown(reason: "ServiceUnavailable"))

    static func settle(attempts: Int, outageWaits: Int, retry: RetryPolicy = RetryPolicy(delays: [.seconds(1), .seconds(5)])) -> Settlement {
        let job = PushJob(id: "j", tokens: [device], options: APNsJobOptions(), payload: Array("{}".utf8),
                          attempts: attempts, outageWaits: outageWaits)
        var settlement = Settlement(job: job, now: UnixTime.now())
        settlement.record(device, down, retry: retry)
        return settlement
    }

    @Test func aWaitUsesNoAttempt() {
        // Its attempts already at the ladder's end: an outage wait still holds it.
        let settlement = Self.settle(attempts: 2, outageWaits: 0)
        #expect(settlement.outageTokens == [Self.device])
        #expect(settlement.retryTokens.isEmpty && settlement.events.isEmpty)
    }

    @Test func pastTheBoundItIsRetriedThenFails() {
        let retried = Self.settle(attempts: 0, outageWaits: PushJob.maximumOutageWaits)
        #expect(retried.outageTokens.isEmpty && retried.retryTokens == [Self.device])
        let failed = Self.settle(attempts: 2, outageWaits: PushJob.maximumOutageWaits)
        #expect(failed.outageTokens.isEmpty && failed.retryTokens.isEmpty)
        #expect(failed.counts.failed == 1)
    }

    @Test func waitsGoAlongTheLadderThenStayAtItsLongestDelay() {
        let policy = RetryPolicy(delays: [.seconds(1), .seconds(5), .seconds(30)])
        #expect(policy.delayQueue(forOutageWait: 1)?.delay == .seconds(1))
        #expect(policy.delayQueue(forOutageWait: 3)?.delay == .seconds(30))
        #expect(policy.delayQueue(forOutageWait: 19)?.delay == .seconds(30))
        #expect(RetryPolicy(delays: []).delayQueue(forOutageWait: 1) == nil)
    }

    @Test func theWaitsTravelWithTheJob() throws {
        let job = PushJob(id: "j", tokens: [Self.device], options: APNsJobOptions(), payload: Array("{}".utf8), outageWaits: 7)
        #expect(String(decoding: job.encoded(), as: UTF8.self).contains(#""outage_waits":7"#))
        #expect(job.derived(tokens: [Self.device], attempts: 1, chunk: nil).outageWaits == 7)
    }
}
