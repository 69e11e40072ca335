import APNsCore
import Foundation
import NIOConcurrencyHelpers
import PushCore
import PushTransport
import Testing
@testable import Worker

/// A round gives its share of the in-flight budget back as its answers come in, not at its
/// slowest answer.
@Suite struct RoundShareTests {
    /// Whatever the sizes, the releases add up to the share, never more than one step is held
    /// beyond the devices still waiting, and a small round gives back one unit per answer.
    @Test(arguments: [(1, 1), (2, 2), (10, 10), (16, 16), (17, 17), (100, 100), (1000, 1000), (10, 1000), (800, 1000), (0, 5)])
    func theReleasesAddUpToTheShare(share: Int, devices: Int) {
        var round = RoundShare(share: share, devices: devices)
        var released = 0
        for answered in 1...devices {
            released += round.answered()
            let waiting = devices - answered
            #expect(round.held <= min(waiting, share) + round.step - 1 || waiting == 0)
            #expect(round.held == share - released)
        }
        #expect(released == share)
        #expect(round.held == 0)
        #expect(round.answered() == 0, "an answer past the last releases nothing")
    }

    @Test func aSmallRoundReleasesOneUnitPerAnswer() {
        var round = RoundShare(share: 10, devices: 10)
        #expect((0..<10).map { _ in round.answered() } == Array(repeating: 1, count: 10))
    }

    /// A round larger than the budget's limit holds the limit until only that many devices wait.
    @Test func aRoundLargerThanItsShareHoldsItUntilFewerWait() {
        var round = RoundShare(share: 10, devices: 25)
        let releases = (0..<25).map { _ in round.answered() }
        #expect(releases.prefix(15).allSatisfy { $0 == 0 })
        #expect(releases.suffix(10).allSatisfy { $0 == 1 })
    }

    /// Over a scripted transport: a 100-device round whose last device's service does not answer
    /// holds a few units of the budget (its device and less than a step), not 100, so a round waiting for room starts before that
    /// answer; when it comes, the budget is empty again.
    @Test func aSlowAnswerHoldsOnlyItsOwnShare() async throws {
        let slow = DeviceToken(trustedHex: String(repeating: "f", count: 64))
        let transport = RecordingTransport { $0 == slow ? nil : RecordingTransport.accepted }
        let budget = DevicesInFlight(limit: 100)
        let devices = (0..<99).map { DeviceToken(trustedHex: String(format: "%064x", $0)) } + [slow]
        let job = PushJob(id: "j", tokens: devices, options: APNsJobOptions(), payload: Array("{}".utf8))
        let finished = NIOLockedValueBox<[PushResult]?>(nil)
        DeliveryRound.send(job, to: devices, ids: RequestIDRange(count: devices.count), with: transport, budget: budget,
                           deliveredAt: .now, latency: LatencyRecorder()) { results in finished.withLockedValue { $0 = results } }
        #expect(transport.heldDevices == [slow])
        // The waiting device, and at most one step (a sixteenth of the share) not yet given back.
        #expect(budget.current <= 1 + 100 / 16 - 1, "only the waiting device holds the budget, not the round's 100")
        let next = NIOLockedValueBox(false)
        budget.acquire(50) { next.withLockedValue { $0 = true } }
        #expect(next.withLockedValue { $0 }, "a round waiting for room started before the slow answer")
        #expect(finished.withLockedValue { $0 } == nil)
        transport.answerHeld()
        #expect(finished.withLockedValue { $0 }?.count == 100)
        #expect(budget.current == 50, "the round gave back all of its share")
        budget.release(50)
        #expect(budget.current == 0)
    }
}
