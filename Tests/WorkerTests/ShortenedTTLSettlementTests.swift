import APNsCore
import PushCore
import PushTransport
import Testing
@testable import Worker

/// A message a service accepted but keeps for less than asked is sent, and counted for the job's
/// job.completed with the shortest time kept.
@Suite struct ShortenedTTLSettlementTests {
    @Test func shortenedAcceptancesAreSentAndCounted() {
        let devices = ["a", "b", "c"].map { DeviceToken(identity: $0, given: $0) }
        let job = PushJob(id: "j", tokens: devices, options: APNsJobOptions(), payload: Array("{}".utf8))
        var settlement = Settlement(job: job, now: UnixTime.now())
        settlement.record(devices, [
            PushResult(status: 201, reason: nil, outcome: .sent, grantedTTL: 600),
            PushResult(status: 201, reason: nil, outcome: .sent),
            PushResult(status: 201, reason: nil, outcome: .sent, grantedTTL: 60),
        ], retry: RetryPolicy())
        #expect(settlement.counts.sent == 3)
        #expect(settlement.counts.ttlShortened == 2)
        #expect(settlement.counts.shortestTTL == 60)
        #expect(settlement.events.isEmpty && settlement.retryTokens.isEmpty)
    }
}
