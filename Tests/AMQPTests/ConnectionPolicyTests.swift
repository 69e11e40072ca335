@testable import AMQP
import Testing

/// The AMQP owner thread's policy, driven by events with a clock passed in: no broker, no waiting.
@Suite struct ConnectionPolicyTests {
    typealias Instant = ContinuousClock.Instant
    let start = ContinuousClock.now

    /// Publishes are ids here: the policy hands them back with their results.
    typealias ConnectionPolicy = AMQP.ConnectionPolicy<Int>
    static let mandatoryKey = PublishConfirms<Int>.ReturnKey(exchange: "x", routingKey: "k", bodyCount: 3, properties: AMQPProperties())

    /// Each publish's results, so a test sees that each completes exactly once.
    struct Results {
        var all: [Int: [Bool]] = [:]
        mutating func run(_ settled: ConnectionPolicy.Settled) {
            for (id, result) in settled { all[id, default: []].append((try? result.get()) != nil) }
        }
    }

    @Test func aSingleAckIncludingTheOldestWaitsForTheAckDelay() {
        var policy = ConnectionPolicy()
        for tag in UInt64(1)...4 { policy.delivered(tag) }
        policy.ackRequested(1, now: start)
        policy.ackRequested(2, now: start)
        let early = policy.dueAcks(now: start + .microseconds(500), prefetches: [])
        #expect(early.isEmpty)
        let acks = policy.dueAcks(now: start + ConnectionPolicy.Timing().ackDelay, prefetches: [])
        #expect(acks.map(\.tag) == [2] && acks.map(\.multiple) == [true])
        #expect(policy.pendingAckCount == 0)
    }

    @Test func acksAfterAGapWaitForTheHoldLimitThenGoAll() {
        var policy = ConnectionPolicy()
        for tag in UInt64(1)...4 { policy.delivered(tag) }
        policy.ackRequested(3, now: start)
        policy.ackRequested(4, now: start)
        // 1 is still in flight: nothing is due at the ack delay.
        let held = policy.dueAcks(now: start + ConnectionPolicy.Timing().ackDelay * 10, prefetches: [])
        #expect(held.isEmpty)
        #expect(policy.millisecondsUntilAcksDue(now: start) == 100)
        let acks = policy.dueAcks(now: start + ConnectionPolicy.Timing().ackHoldLimit, prefetches: [])
        #expect(acks.map(\.tag) == [3, 4] && acks.allSatisfy { !$0.multiple })
    }

    @Test func halfThePrefetchWaitingSendsEverything() {
        var policy = ConnectionPolicy()
        for tag in UInt64(1)...8 { policy.delivered(tag) }
        for tag in UInt64(2)...4 { policy.ackRequested(tag, now: start) }
        #expect(policy.acksDue(now: start, prefetches: [8]) == nil)
        policy.ackRequested(5, now: start)
        #expect(policy.acksDue(now: start, prefetches: [8]) == .all)
        let all = policy.dueAcks(now: start, prefetches: [8])
        #expect(all.map(\.tag) == [2, 3, 4, 5])
    }

    /// Each consumer's acks are held against its own prefetch: the bulk lane's window of 10 does not
    /// send the job queue's acks (window 8,000) one by one once five of them wait behind a gap.
    @Test func acksAreHeldAgainstTheirOwnConsumersPrefetch() {
        var policy = ConnectionPolicy()
        let prefetches = [8_000, 10]
        for tag in UInt64(1)...20 { policy.delivered(tag, consumer: 0) }
        for tag in UInt64(21)...30 { policy.delivered(tag, consumer: 1) }
        // 1 is still in flight: the job queue's acks wait for it.
        for tag in UInt64(2)...20 { policy.ackRequested(tag, now: start) }
        #expect(policy.acksDue(now: start + ConnectionPolicy.Timing().ackDelay, prefetches: prefetches) == nil)
        for tag in UInt64(21)...24 { policy.ackRequested(tag, now: start) }
        #expect(policy.acksDue(now: start, prefetches: prefetches) == nil)
        // Half the bulk lane's window waits: everything goes.
        policy.ackRequested(25, now: start)
        #expect(policy.acksDue(now: start, prefetches: prefetches) == .all)
        let all = policy.dueAcks(now: start, prefetches: prefetches)
        #expect(all.map(\.tag) == Array(2...25) && policy.pendingAckCount == 0)
    }

    /// Acks held behind a gap are timed from when each was asked for: an earlier batch that went out
    /// does not make them due (with the batch's time, acks that kept coming a little out of order
    /// all went one by one once the first batch was 100 ms old).
    @Test func heldAcksCountTheirHoldFromTheirOwnRequest() {
        var policy = ConnectionPolicy()
        let timing = ConnectionPolicy.Timing()
        for tag in UInt64(1)...4 { policy.delivered(tag) }
        policy.ackRequested(1, now: start)
        let late = start + timing.ackHoldLimit - .milliseconds(10)
        policy.ackRequested(3, now: late)
        // 1 goes (the oldest run); 3 waits for 2.
        let first = policy.dueAcks(now: late, prefetches: [])
        #expect(first.map(\.tag) == [1] && policy.pendingAckCount == 1)
        #expect(policy.dueAcks(now: start + timing.ackHoldLimit, prefetches: []).isEmpty, "3 has waited 10 ms, not 100")
        policy.ackRequested(2, now: start + timing.ackHoldLimit)
        let run = policy.dueAcks(now: start + timing.ackHoldLimit + timing.ackDelay, prefetches: [])
        #expect(run.map(\.tag) == [3] && run.map(\.multiple) == [true])
        // Alone behind a gap, an ack still goes after the hold limit of its own.
        policy.ackRequested(4, now: late)
        #expect(policy.dueAcks(now: late + timing.ackHoldLimit, prefetches: []).map(\.tag) == [4])
    }

    @Test func aFullBatchIncludingTheOldestGoesAtOnce() {
        var policy = ConnectionPolicy()
        let batch = UInt64(policy.timing.ackBatch)
        for tag in 1...batch + 1 { policy.delivered(tag) }
        for tag in 1..<batch { policy.ackRequested(tag, now: start) }
        #expect(policy.acksDue(now: start, prefetches: []) == nil)
        policy.ackRequested(batch, now: start)
        let acks = policy.dueAcks(now: start, prefetches: [])
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
        policy.written(1, returnKey: nil, now: start)
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
        policy.written(1, returnKey: nil, now: start)
        policy.brokerBlocked()
        guard case .fine = policy.checkConfirms(now: start + policy.timing.confirmTimeout * 10) else {
            Issue.record("timed out while blocked"); return
        }
    }

    @Test func publishesWaitWhileBlockedAndGoInOrderAfter() {
        var policy = ConnectionPolicy()
        var results = Results()
        policy.brokerBlocked()
        let first = policy.admit(1), second = policy.admit(2)
        #expect(!first && !second)
        let held = policy.brokerUnblocked(now: start)
        #expect(held.count == 2 && policy.heldPublishCount == 0)
        let third = policy.admit(3)
        #expect(third)
        results.run(held.map { ($0, .success(())) })
        #expect(results.all == [1: [true], 2: [true]])
    }

    /// One publish the broker never confirms, while it confirms every other: it fails once its age
    /// passes the limit (the caller's retry path), and its slot does not keep every later one.
    @Test func aPublishNeverConfirmedExpiresAndDoesNotPinMemory() {
        var policy = ConnectionPolicy()
        var results = Results()
        var now = start
        var largestSlots = 0
        // 4,000 publishes a second for 90 s; sequence 5 is never confirmed.
        for second in 0..<90 {
            for index in 0..<4_000 {
                let id = second * 4_000 + index + 1
                policy.written(id, returnKey: nil, now: now)
                if id != 5 { results.run(policy.confirmed(UInt64(id), multiple: false, nacked: false, now: now)) }
            }
            now = start + .seconds(second + 1)
            if case .expired(let settled) = policy.checkConfirms(now: now) { results.run(settled) }
            largestSlots = max(largestSlots, policy.confirms.slotCount)
        }
        let all = results.all
        #expect(all[5] == [false], "the unconfirmed publish fails once")
        #expect(all.count == 360_000 && all.values.allSatisfy { $0.count == 1 })
        #expect(policy.confirms.outstanding == 0)
        #expect(largestSlots <= 2 * PublishConfirms<Int>.sweepSize, "slots: \(largestSlots)")
    }

    @Test func expiryWaitsForTheAgeLimitAndRestartsAfterABlock() {
        var policy = ConnectionPolicy()
        var results = Results()
        policy.written(1, returnKey: nil, now: start)
        policy.written(2, returnKey: nil, now: start)
        results.run(policy.confirmed(2, multiple: false, nacked: false, now: start))
        _ = policy.checkConfirms(now: start)
        policy.brokerBlocked()
        guard case .fine = policy.checkConfirms(now: start + .seconds(120)) else { Issue.record("expired while blocked"); return }
        _ = policy.brokerUnblocked(now: start + .seconds(120))
        guard case .fine = policy.checkConfirms(now: start + .seconds(170)) else { Issue.record("expired early"); return }
        // Other confirms keep the broker counted as alive.
        policy.written(3, returnKey: nil, now: start + .seconds(175))
        results.run(policy.confirmed(3, multiple: false, nacked: false, now: start + .seconds(179)))
        guard case .expired(let settled) = policy.checkConfirms(now: start + .seconds(181)) else { Issue.record("not expired"); return }
        results.run(settled)
        #expect(results.all == [1: [false], 2: [true], 3: [true]])
    }

    /// The one reset: outstanding and held publishes fail exactly once, acks and deliveries are forgotten.
    @Test func resetFailsEveryPublishOnceAndForgetsDeliveries() {
        var policy = ConnectionPolicy()
        var results = Results()
        policy.written(1, returnKey: nil, now: start)
        policy.written(2, returnKey: Self.mandatoryKey, now: start)
        policy.brokerBlocked()
        _ = policy.admit(3)
        policy.delivered(1)
        policy.ackRequested(1, now: start)
        results.run(policy.reset(failingWith: AMQPError(code: .connectionLost, message: "gone")))
        #expect(results.all == [1: [false], 2: [false], 3: [false]])
        #expect(!policy.blocked && policy.pendingAckCount == 0 && policy.unacked.count == 0)
        #expect(policy.confirms.outstanding == 0 && policy.confirms.nextSequence == 1)
        results.run(policy.reset(failingWith: AMQPError(code: .connectionLost, message: "again")))
        #expect(results.all == [1: [false], 2: [false], 3: [false]])
    }
}
