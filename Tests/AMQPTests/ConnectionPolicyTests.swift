@testable import AMQP
import NIOConcurrencyHelpers
import Testing

/// The AMQP owner thread's policy, driven by events with a clock passed in: no broker, no waiting.
@Suite struct ConnectionPolicyTests {
    typealias Instant = ContinuousClock.Instant
    let start = ContinuousClock.now

    /// Counts each publish's completions, so a test sees that each completes exactly once.
    final class Completions: Sendable {
        let results = NIOLockedValueBox<[Int: [Bool]]>([:])
        func request(_ id: Int, mandatory: Bool = false) -> PublishRequest {
            PublishRequest(exchange: "x", routingKey: "k", body: [1, 2, 3], properties: AMQPProperties(), mandatory: mandatory,
                           completion: { [results] result in
                               results.withLockedValue { $0[id, default: []].append((try? result.get()) != nil) }
                           })
        }
        var snapshot: [Int: [Bool]] { results.withLockedValue { $0 } }
    }

    static func run(_ settled: PublishConfirms.Settled) {
        for (completion, result) in settled { completion(result) }
    }

    @Test func aSingleAckIncludingTheOldestWaitsForTheAckDelay() {
        var policy = ConnectionPolicy()
        for tag in UInt64(1)...4 { policy.delivered(tag) }
        policy.ackRequested(1, now: start)
        policy.ackRequested(2, now: start)
        let early = policy.dueAcks(now: start + .microseconds(500))
        #expect(early.isEmpty)
        let acks = policy.dueAcks(now: start + ConnectionPolicy.Timing().ackDelay)
        #expect(acks.map(\.tag) == [2] && acks.map(\.multiple) == [true])
        #expect(policy.pendingAckCount == 0)
    }

    @Test func acksAfterAGapWaitForTheHoldLimitThenGoAll() {
        var policy = ConnectionPolicy()
        for tag in UInt64(1)...4 { policy.delivered(tag) }
        policy.ackRequested(3, now: start)
        policy.ackRequested(4, now: start)
        // 1 is still in flight: nothing is due at the ack delay.
        let held = policy.dueAcks(now: start + ConnectionPolicy.Timing().ackDelay * 10)
        #expect(held.isEmpty)
        #expect(policy.millisecondsUntilAcksDue(now: start) == 100)
        let acks = policy.dueAcks(now: start + ConnectionPolicy.Timing().ackHoldLimit)
        #expect(acks.map(\.tag) == [3, 4] && acks.allSatisfy { !$0.multiple })
    }

    @Test func halfThePrefetchWaitingSendsEverything() {
        var policy = ConnectionPolicy()
        policy.smallestPrefetch = 8
        for tag in UInt64(1)...8 { policy.delivered(tag) }
        for tag in UInt64(2)...4 { policy.ackRequested(tag, now: start) }
        #expect(policy.acksDue(now: start) == nil)
        policy.ackRequested(5, now: start)
        #expect(policy.acksDue(now: start) == .all)
        let all = policy.dueAcks(now: start)
        #expect(all.map(\.tag) == [2, 3, 4, 5])
    }

    @Test func aFullBatchIncludingTheOldestGoesAtOnce() {
        var policy = ConnectionPolicy()
        let batch = UInt64(policy.timing.ackBatch)
        for tag in 1...batch + 1 { policy.delivered(tag) }
        for tag in 1..<batch { policy.ackRequested(tag, now: start) }
        #expect(policy.acksDue(now: start) == nil)
        policy.ackRequested(batch, now: start)
        let acks = policy.dueAcks(now: start)
        #expect(acks.map(\.tag) == [batch])
    }

    @Test func aSettleIsSentOnlyForTagsTheChannelKnows() {
        var policy = ConnectionPolicy()
        for tag in UInt64(1)...3 { policy.delivered(tag) }
        let single = policy.settle(2, multiple: false), again = policy.settle(2, multiple: false)
        let multiple = policy.settle(3, multiple: true), multipleAgain = policy.settle(3, multiple: true)
        #expect(single.map { $0 == (2, false) } == true && again == nil)
        #expect(multiple.map { $0 == (3, true) } == true && multipleAgain == nil)
    }

    @Test func buffersWaitForMoreOnlyWhileIdleAndOnlyForTheCoalescingTime() {
        var policy = ConnectionPolicy()
        let busy = policy.write(idle: false, hasBufferedFrames: true, now: start)
        let idle = policy.write(idle: true, hasBufferedFrames: true, now: start)
        #expect(busy == .now && idle == .coalesce)
        #expect(policy.pollTimeout(base: 500, now: start) == 1)
        let stillWaiting = policy.write(idle: true, hasBufferedFrames: true, now: start + .microseconds(500))
        let due = policy.write(idle: true, hasBufferedFrames: true, now: start + policy.timing.writeCoalescing)
        #expect(stillWaiting == .coalesce && due == .now)
        #expect(policy.pollTimeout(base: 500, now: start) == 500)
        let nothingBuffered = policy.write(idle: true, hasBufferedFrames: false, now: start)
        #expect(nothingBuffered == .now)
    }

    @Test func aBrokerThatConfirmsNothingForTheTimeoutIsGone() {
        var policy = ConnectionPolicy()
        let completions = Completions()
        policy.written(completions.request(1), now: start)
        guard case .fine = policy.checkConfirms(now: start + policy.timing.confirmTimeout - .seconds(1)) else {
            Issue.record("timed out early"); return
        }
        guard case .brokerSilent = policy.checkConfirms(now: start + policy.timing.confirmTimeout) else {
            Issue.record("no timeout"); return
        }
    }

    /// A memory alarm can block the connection for minutes; reconnecting would send the held jobs again.
    @Test func noTimeoutWhileTheBrokerBlocksTheConnection() {
        var policy = ConnectionPolicy()
        let completions = Completions()
        policy.written(completions.request(1), now: start)
        policy.brokerBlocked()
        guard case .fine = policy.checkConfirms(now: start + policy.timing.confirmTimeout * 10) else {
            Issue.record("timed out while blocked"); return
        }
    }

    @Test func publishesWaitWhileBlockedAndGoInOrderAfter() {
        var policy = ConnectionPolicy()
        let completions = Completions()
        policy.brokerBlocked()
        let first = policy.admit(completions.request(1)), second = policy.admit(completions.request(2))
        #expect(!first && !second)
        let held = policy.brokerUnblocked(now: start)
        #expect(held.count == 2 && policy.heldPublishCount == 0)
        let third = policy.admit(completions.request(3))
        #expect(third)
        for request in held { request.completion(.success(())) }
        #expect(completions.snapshot == [1: [true], 2: [true]])
    }

    /// One publish the broker never confirms, while it confirms every other: it fails once its age
    /// passes the limit (the caller's retry path), and its slot does not keep every later one.
    @Test func aPublishNeverConfirmedExpiresAndDoesNotPinMemory() {
        var policy = ConnectionPolicy()
        let completions = Completions()
        var now = start
        var largestSlots = 0
        // 4,000 publishes a second for 90 s; sequence 5 is never confirmed.
        for second in 0..<90 {
            for index in 0..<4_000 {
                let id = second * 4_000 + index + 1
                policy.written(completions.request(id), now: now)
                if id != 5 { Self.run(policy.confirmed(UInt64(id), multiple: false, nacked: false, now: now)) }
            }
            now = start + .seconds(second + 1)
            if case .expired(let settled) = policy.checkConfirms(now: now) { Self.run(settled) }
            largestSlots = max(largestSlots, policy.confirms.slotCount)
        }
        let results = completions.snapshot
        #expect(results[5] == [false], "the unconfirmed publish fails once")
        #expect(results.count == 360_000 && results.values.allSatisfy { $0.count == 1 })
        #expect(policy.confirms.outstanding == 0)
        #expect(largestSlots <= 2 * PublishConfirms.sweepSize, "slots: \(largestSlots)")
    }

    @Test func expiryWaitsForTheAgeLimitAndRestartsAfterABlock() {
        var policy = ConnectionPolicy()
        let completions = Completions()
        policy.written(completions.request(1), now: start)
        policy.written(completions.request(2), now: start)
        Self.run(policy.confirmed(2, multiple: false, nacked: false, now: start))
        _ = policy.checkConfirms(now: start)
        policy.brokerBlocked()
        guard case .fine = policy.checkConfirms(now: start + .seconds(120)) else { Issue.record("expired while blocked"); return }
        _ = policy.brokerUnblocked(now: start + .seconds(120))
        guard case .fine = policy.checkConfirms(now: start + .seconds(170)) else { Issue.record("expired early"); return }
        // Other confirms keep the broker counted as alive.
        policy.written(completions.request(3), now: start + .seconds(175))
        Self.run(policy.confirmed(3, multiple: false, nacked: false, now: start + .seconds(179)))
        guard case .expired(let settled) = policy.checkConfirms(now: start + .seconds(181)) else { Issue.record("not expired"); return }
        Self.run(settled)
        #expect(completions.snapshot == [1: [false], 2: [true], 3: [true]])
    }

    /// The one reset: outstanding and held publishes fail exactly once, acks and deliveries are forgotten.
    @Test func resetFailsEveryPublishOnceAndForgetsDeliveries() {
        var policy = ConnectionPolicy()
        policy.smallestPrefetch = 50
        let completions = Completions()
        policy.written(completions.request(1), now: start)
        policy.written(completions.request(2, mandatory: true), now: start)
        policy.brokerBlocked()
        _ = policy.admit(completions.request(3))
        policy.delivered(1)
        policy.ackRequested(1, now: start)
        Self.run(policy.reset(failingWith: AMQPError(code: .connectionLost, message: "gone")))
        #expect(completions.snapshot == [1: [false], 2: [false], 3: [false]])
        #expect(!policy.blocked && policy.pendingAckCount == 0 && policy.unacked.count == 0)
        #expect(policy.confirms.outstanding == 0 && policy.confirms.nextSequence == 1)
        #expect(policy.smallestPrefetch == 50, "the consumers outlive the connection")
        Self.run(policy.reset(failingWith: AMQPError(code: .connectionLost, message: "again")))
        #expect(completions.snapshot == [1: [false], 2: [false], 3: [false]])
    }
}
