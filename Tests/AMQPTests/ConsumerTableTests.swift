@testable import AMQP
import Testing

/// Consuming is idempotent per queue: whatever order starts, restarts and stops come in, one tag per
/// queue. A consume or cancel is never waited for in place: what is asked meanwhile happens on its
/// answer.
@Suite struct ConsumerTableTests {
    static let handler: @Sendable (AMQPDelivery) -> Void = { _ in }

    /// The table after a consume of "q" at `prefetch` that the broker confirmed.
    static func consuming(prefetch: UInt16) -> ConsumerTable {
        var table = ConsumerTable()
        _ = table.consume(queue: "q", prefetch: prefetch, maxBodyBytes: 1)
        table.starting("pushworker.1")
        _ = table.started("pushworker.1")
        return table
    }

    @Test func consumingAQueueTwiceKeepsOneConsumer() {
        var table = ConsumerTable()
        let first = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        #expect(first == .start(tag: "pushworker.1"))
        table.starting("pushworker.1")
        _ = table.started("pushworker.1")
        let same = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        #expect(same == .unchanged(tag: "pushworker.1"))
        let other = table.consume(queue: "other", prefetch: 5, maxBodyBytes: 1)
        #expect(other == .start(tag: "pushworker.2"))
        #expect(table.count == 2 && table.activePrefetches == [10, 5])
        #expect(!table.changeInFlight)
    }

    /// A new prefetch restarts the consumer: cancel first, start on the cancel-ok.
    @Test func aNewPrefetchStartsAfterTheCancelOk() {
        var table = Self.consuming(prefetch: 10)
        let retune = table.consume(queue: "q", prefetch: 20, maxBodyBytes: 1)
        #expect(retune == .cancelThenStart(tag: "pushworker.1"))
        #expect(table.changeInFlight)
        // The broker still runs the old prefetch until the restart.
        #expect(table.activePrefetches == [10])
        let again = table.consume(queue: "q", prefetch: 30, maxBodyBytes: 1)
        #expect(again == .startAfterCancel(tag: "pushworker.1"))
        let startAgain = table.cancelConfirmed("pushworker.1")
        #expect(startAgain)
        #expect(table["pushworker.1"]?.prefetch == 30, "the newest prefetch is the one started")
        table.starting("pushworker.1")
        #expect(table.changeInFlight, "until its consume-ok")
        _ = table.started("pushworker.1")
        #expect(table["pushworker.1"]?.atBroker == .consuming(prefetch: 30))
        #expect(table.activePrefetches == [30] && !table.changeInFlight)
    }

    /// Stops: one cancel however many stops; a stop during a restart's cancel leaves it stopped, and
    /// a consume during a stop's cancel starts it again on the cancel-ok.
    @Test func stopsAndConsumesDuringACancel() {
        var table = Self.consuming(prefetch: 10)
        let firstStop = table.stopAll()
        #expect(firstStop == ["pushworker.1"])
        let secondStop = table.stopAll()
        #expect(secondStop.isEmpty, "the cancel is already in flight")
        let confirmedStop = table.cancelConfirmed("pushworker.1")
        #expect(!confirmedStop)
        #expect(table["pushworker.1"]?.atBroker == ConsumerTable.Consumer.AtBroker.none)

        var retuned = Self.consuming(prefetch: 10)
        _ = retuned.consume(queue: "q", prefetch: 20, maxBodyBytes: 1)
        let stopDuringRestart = retuned.stopAll()
        #expect(stopDuringRestart.isEmpty)
        let restartAfterStop = retuned.cancelConfirmed("pushworker.1")
        #expect(!restartAfterStop, "the stop came last")

        var resumed = Self.consuming(prefetch: 10)
        _ = resumed.stopAll()
        let resume = resumed.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        #expect(resume == .startAfterCancel(tag: "pushworker.1"))
        let startAgain = resumed.cancelConfirmed("pushworker.1")
        #expect(startAgain, "the consume came last")
    }

    /// A server cancel, then a consume (a retune or a resume), then the consume scheduled for the
    /// cancel: one consumer, not two.
    @Test func aServerCancelThenTwoConsumesKeepsOneConsumer() {
        var table = Self.consuming(prefetch: 10)
        table.cancelledByBroker("pushworker.1")
        let first = table.consume(queue: "q", prefetch: 40, maxBodyBytes: 1)
        #expect(first == .start(tag: "pushworker.1"))
        table.starting("pushworker.1")
        _ = table.started("pushworker.1")
        let second = table.consume(queue: "q", prefetch: 40, maxBodyBytes: 1)
        #expect(second == .unchanged(tag: "pushworker.1"))
        #expect(table.count == 1)
    }

    /// Our cancel crossed the broker's own cancel, and the consumer was started again before our
    /// cancel-ok came: that late cancel-ok must not mark the running consumer gone (a later consume
    /// would then start a second one with the same tag).
    @Test func aLateCancelOkLeavesARestartedConsumerRunning() {
        var table = Self.consuming(prefetch: 10)
        _ = table.stopAll()
        table.cancelledByBroker("pushworker.1")
        _ = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        table.starting("pushworker.1")
        _ = table.started("pushworker.1")
        let late = table.cancelConfirmed("pushworker.1")
        #expect(!late)
        #expect(table["pushworker.1"]?.atBroker == .consuming(prefetch: 10))
    }

    /// A lost connection takes every consumer at the broker with it; the wanted ones start on the
    /// next, and a refused consume is not retried.
    @Test func aNewConnectionStartsTheWantedConsumers() {
        var table = Self.consuming(prefetch: 10)
        _ = table.consume(queue: "other", prefetch: 5, maxBodyBytes: 1)
        table.starting("pushworker.2")
        #expect(table.consumeRefused() == "pushworker.2")
        _ = table.consume(queue: "q", prefetch: 20, maxBodyBytes: 1)
        let toStart = table.connectionEnded()
        #expect(toStart == ["pushworker.1"])
        #expect(!table.changeInFlight)
        let next = table.consume(queue: "q", prefetch: 20, maxBodyBytes: 1)
        #expect(next == .start(tag: "pushworker.1"))
    }

    /// A stop during a start: the cancel waits for the consume-ok (RabbitMQ's channel crashes on a
    /// cancel of a consume it has not answered), then nothing starts again.
    @Test func aStopDuringAStartCancelsOnTheConsumeOk() {
        var table = ConsumerTable()
        _ = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        table.starting("pushworker.1")
        let stop = table.stopAll()
        #expect(stop.isEmpty, "no cancel before the consume-ok")
        #expect(table.changeInFlight)
        #expect(table.started("pushworker.1") == .cancelNow)
        #expect(table["pushworker.1"]?.atBroker == .cancelling(prefetch: 10))
        let startAgain = table.cancelConfirmed("pushworker.1")
        #expect(!startAgain)
        #expect(!table.changeInFlight && table.activePrefetches == [Int.max])
    }

    /// A retune during a start: cancel on the consume-ok, start with the newest prefetch on the
    /// cancel-ok. The prefetch in flight limits acks meanwhile.
    @Test func aRetuneDuringAStartRestartsWithTheNewestPrefetch() {
        var table = ConsumerTable()
        _ = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        table.starting("pushworker.1")
        let retune = table.consume(queue: "q", prefetch: 20, maxBodyBytes: 1)
        #expect(retune == .startAfterCancel(tag: "pushworker.1"))
        #expect(table.activePrefetches == [10])
        let newest = table.consume(queue: "q", prefetch: 30, maxBodyBytes: 1)
        #expect(newest == .startAfterCancel(tag: "pushworker.1"))
        #expect(table.started("pushworker.1") == .cancelNow)
        let startAgain = table.cancelConfirmed("pushworker.1")
        #expect(startAgain)
        table.starting("pushworker.1")
        #expect(table.started("pushworker.1") == .running)
        #expect(table["pushworker.1"]?.atBroker == .consuming(prefetch: 30))
        #expect(!table.changeInFlight)
    }

    /// A stop and then a consume with the prefetch in flight, all before the consume-ok: the
    /// consume in flight is the one wanted, so no cancel and no second start.
    @Test func aStopUndoneDuringAStartKeepsTheStart() {
        var table = ConsumerTable()
        _ = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        table.starting("pushworker.1")
        _ = table.stopAll()
        let resume = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        #expect(resume == .awaitingConsumeOk(tag: "pushworker.1"))
        #expect(table.started("pushworker.1") == .running)
        #expect(table["pushworker.1"]?.atBroker == .consuming(prefetch: 10))
        #expect(table.started("pushworker.1") == .none, "a second consume-ok is stale")
    }

    /// The broker answers in order and drops what follows a failed method until the channel is
    /// reopened: the oldest unanswered consume is the refused one, and the others start again on
    /// the next channel.
    @Test func aRefusedConsumeIsTheOldestUnanswered() {
        var table = ConsumerTable()
        _ = table.consume(queue: "jobs", prefetch: 10, maxBodyBytes: 1)
        _ = table.consume(queue: "missing", prefetch: 10, maxBodyBytes: 1)
        _ = table.consume(queue: "bulk", prefetch: 10, maxBodyBytes: 1)
        for tag in ["pushworker.1", "pushworker.2", "pushworker.3"] { table.starting(tag) }
        #expect(table.started("pushworker.1") == .running)
        #expect(table.consumeRefused() == "pushworker.2")
        #expect(table["pushworker.2"]?.wanted == false)
        let toStart = table.connectionEnded()
        #expect(toStart == ["pushworker.1", "pushworker.3"])
        #expect(table.consumeRefused() == nil, "nothing is unanswered on a new channel")
    }

    /// Every basic.consume goes out under a fresh wire tag, so a retune never starts a consumer
    /// under the tag of the one it cancelled (RabbitMQ 3.10.8's quorum queues crash the channel on
    /// that). Control frames match only the tag running now; deliveries of an earlier consume still
    /// reach the queue's handler.
    @Test func eachConsumeGoesOutUnderAFreshWireTag() {
        var table = ConsumerTable()
        _ = table.consume(queue: "q", prefetch: 10, maxBodyBytes: 1)
        let first = table.starting("pushworker.1")
        #expect(first == "pushworker.1.1")
        #expect(table.tag(forWireTag: "pushworker.1.1") == "pushworker.1")
        _ = table.started("pushworker.1")
        _ = table.consume(queue: "q", prefetch: 20, maxBodyBytes: 1)
        let startAgain = table.cancelConfirmed("pushworker.1")
        #expect(startAgain)
        let second = table.starting("pushworker.1")
        #expect(second == "pushworker.1.2")
        #expect(table.tag(forWireTag: "pushworker.1.1") == nil, "a stale cancel-ok or consume-ok matches nothing")
        #expect(table.tag(forWireTag: "pushworker.1.2") == "pushworker.1")
        #expect(table.deliveryConsumer(wireTag: "pushworker.1.1")?.queue == "q", "a delivery sent before the cancel-ok")
        #expect(table.deliveryConsumer(wireTag: "pushworker.1.2")?.queue == "q")
        #expect(table.deliveryConsumer(wireTag: "pushworker.1.3") == nil, "never sent")
        #expect(table.deliveryConsumer(wireTag: "pushworker.1") == nil)
        #expect(table.deliveryConsumer(wireTag: "amq.ctag-x") == nil)
        _ = table.consume(queue: "other", prefetch: 5, maxBodyBytes: 1)
        let other = table.starting("pushworker.2")
        #expect(other == "pushworker.2.3", "numbered across the connection's consumers")
        #expect(table.deliveryConsumer(wireTag: "pushworker.2.3")?.queue == "other")
        // A new connection starts them under new tags again.
        let toStart = table.connectionEnded()
        #expect(toStart == ["pushworker.1", "pushworker.2"])
        #expect(table.tag(forWireTag: "pushworker.1.2") == nil)
        let restarted = table.starting("pushworker.1")
        #expect(restarted == "pushworker.1.4")
    }
}
