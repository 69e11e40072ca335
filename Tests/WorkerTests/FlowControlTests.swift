import NIOConcurrencyHelpers
import Testing
@testable import Worker

@Suite("Flow control: devices in flight and the prefetch")
struct FlowControlTests {
    final class Started: Sendable {
        let order = NIOLockedValueBox<[String]>([])
        func callback(_ name: String) -> @Sendable () -> Void { { self.order.withLockedValue { $0.append(name) } } }
        var names: [String] { order.withLockedValue { $0 } }
    }

    @Test func roundsStartWhileTheBudgetHasRoomThenInArrivalOrder() {
        let budget = DevicesInFlight(limit: 10)
        let started = Started()
        budget.acquire(6, then: started.callback("a"))
        budget.acquire(4, then: started.callback("b"))
        budget.acquire(1, then: started.callback("c"))       // full: waits
        budget.acquire(1, then: started.callback("d"))       // waits behind c, even if c could not start
        #expect(started.names == ["a", "b"])
        #expect(budget.current == 10)
        budget.release(4)
        #expect(started.names == ["a", "b", "c", "d"])
        #expect(budget.current == 8)
    }

    /// Bulk rounds stay within their share, so a transactional round finds room at once; and when
    /// room comes back, a waiting transactional round starts before waiting bulk ones.
    @Test func bulkRoundsKeepToTheirShareAndTransactionalOnesOvertake() {
        let budget = DevicesInFlight(limit: 10, bulkSharePercent: 60)
        let started = Started()
        budget.acquire(4, bulk: true, then: started.callback("chunk1"))
        budget.acquire(4, bulk: true, then: started.callback("chunk2"))     // 8 > the bulk share of 6: waits
        budget.acquire(1, then: started.callback("reset"))                   // transactional: room at once
        #expect(started.names == ["chunk1", "reset"])
        #expect(budget.current == 5 && budget.currentBulk == 4)
        budget.acquire(5, then: started.callback("big"))                     // 10: fits
        budget.acquire(2, then: started.callback("late"))                    // full: waits
        #expect(started.names == ["chunk1", "reset", "big"])
        budget.release(4, bulk: true)
        #expect(started.names == ["chunk1", "reset", "big", "late"], "the transactional round first")
        budget.release(5)
        #expect(started.names == ["chunk1", "reset", "big", "late", "chunk2"])
        #expect(budget.current == 7 && budget.currentBulk == 4)
    }

    /// A bulk round larger than the share runs, alone among bulk rounds, and counts as the share:
    /// the rest of the budget stays free for transactional rounds.
    @Test func aBulkRoundLargerThanItsShareRunsAloneAndLeavesTheRestFree() {
        let budget = DevicesInFlight(limit: 10, bulkSharePercent: 50)
        let started = Started()
        budget.acquire(1000, bulk: true, then: started.callback("chunk"))
        budget.acquire(1, bulk: true, then: started.callback("next"))
        budget.acquire(5, then: started.callback("transactional"))
        #expect(started.names == ["chunk", "transactional"])
        #expect(budget.current == 10 && budget.currentBulk == 5)
        budget.release(1000, bulk: true)
        #expect(started.names == ["chunk", "transactional", "next"])
        #expect(budget.current == 6 && budget.currentBulk == 1)
    }

    @Test func aRoundLargerThanTheWholeBudgetTakesAllOfIt() {
        let budget = DevicesInFlight(limit: 10)
        let started = Started()
        budget.acquire(3, then: started.callback("small"))
        budget.acquire(5000, then: started.callback("chunk"))
        #expect(started.names == ["small"], "waits until the budget is empty")
        budget.release(3)
        #expect(started.names == ["small", "chunk"])
        #expect(budget.current == 10)
        budget.release(5000)
        #expect(budget.current == 0)
    }

    @Test func manyWaitersAreServedInOrderAcrossCompactions() {
        let budget = DevicesInFlight(limit: 1)
        let started = Started()
        for index in 0..<500 { budget.acquire(1, then: started.callback("\(index)")) }
        for _ in 0..<500 { budget.release(1) }
        #expect(started.names == (0..<500).map { "\($0)" })
        #expect(budget.current == 0)
    }

    /// APNs lowers its stream limit (to 1 after a rejection) and raises it again: the budget follows
    /// the connections' live capacity, never above `--max-in-flight`.
    @Test func theBudgetFollowsWhatTheConnectionsAllowNow() {
        let streams = NIOLockedValueBox(4)
        let budget = DevicesInFlight(limit: 10) { streams.withLockedValue { $0 } }
        let started = Started()
        #expect(budget.capacity == 4)
        for name in ["a", "b", "c", "d", "e"] { budget.acquire(1, then: started.callback(name)) }
        #expect(started.names == ["a", "b", "c", "d"])
        streams.withLockedValue { $0 = 1 }
        budget.release(1)
        #expect(started.names == ["a", "b", "c", "d"], "3 in flight, 1 allowed: e waits")
        streams.withLockedValue { $0 = 1000 }
        #expect(budget.capacity == 10, "capped by the limit")
        budget.release(1)
        #expect(started.names == ["a", "b", "c", "d", "e"])
        #expect(budget.current == 3)
    }

    /// Rounds of 100 against a paced capacity of 256 wait with 200 in flight, so the pools never see
    /// their ceiling reached: the transports hear that rounds wait for their capacity, and hear it
    /// end when nothing waits. Bulk rounds waiting for their share of that capacity count too;
    /// rounds that wait for `--max-in-flight` say nothing (no capacity would let them start).
    @Test func roundsWaitingForThePoolsCapacityAreToldToTheTransports() {
        let told = NIOLockedValueBox<[Bool]>([])
        let budget = DevicesInFlight(limit: 4000, streamCapacity: { 256 }, demandHeldBack: { held in told.withLockedValue { $0.append(held) } })
        let started = Started()
        for name in ["a", "b", "c"] { budget.acquire(100, then: started.callback(name)) }
        #expect(started.names == ["a", "b"])
        #expect(told.withLockedValue { $0 } == [true])
        #expect(budget.holdsBackDemand)
        budget.release(100)
        #expect(started.names == ["a", "b", "c"])
        #expect(told.withLockedValue { $0 } == [true, false])
        budget.release(100)
        budget.release(100)
        #expect(told.withLockedValue { $0 } == [true, false], "said once each way, not per round")

        for name in ["bulk1", "bulk2", "bulk3"] { budget.acquire(100, bulk: true, then: started.callback(name)) }
        #expect(started.names == ["a", "b", "c", "bulk1", "bulk2"], "200 of a bulk share of 204")
        #expect(told.withLockedValue { $0 } == [true, false, true])
        budget.release(100, bulk: true)
        #expect(told.withLockedValue { $0 } == [true, false, true, false])

        let limitTold = NIOLockedValueBox<[Bool]>([])
        let limited = DevicesInFlight(limit: 200, streamCapacity: { 10_000 }, demandHeldBack: { held in limitTold.withLockedValue { $0.append(held) } })
        for name in ["x", "y", "z"] { limited.acquire(100, then: started.callback(name)) }
        #expect(started.names.suffix(2) == ["x", "y"])
        #expect(limitTold.withLockedValue { $0 }.isEmpty)
        #expect(!limited.holdsBackDemand)
    }

    /// A round larger than the live capacity (a 1,000-device chunk while APNs allows 4 streams)
    /// starts alone once nothing is in flight, and gives back exactly what it took.
    @Test func aRoundLargerThanTheLiveCapacityStartsAlone() {
        let budget = DevicesInFlight(limit: 4000) { 4 }
        let started = Started()
        budget.acquire(2, then: started.callback("small"))
        budget.acquire(1000, then: started.callback("chunk"))
        budget.acquire(1, then: started.callback("after"))
        #expect(started.names == ["small"])
        budget.release(2)
        #expect(started.names == ["small", "chunk"])
        #expect(budget.current == 1000)
        budget.release(1000)
        #expect(started.names == ["small", "chunk", "after"])
        #expect(budget.current == 1)
    }

    @Test func thePrefetchFollowsTheJobsSize() {
        // One-device jobs of ~300 bytes: twice the budget, so the pipe stays full while acks travel.
        #expect(PrefetchTuning.prefetch(meanDevices: 1, meanBytes: 300, maxInFlight: 4000, maxBytesInFlight: 64 << 20) == 8000)
        // However large the budget, basic.qos counts in 16 bits.
        #expect(PrefetchTuning.prefetch(meanDevices: 1, meanBytes: 100, maxInFlight: 100_000, maxBytesInFlight: 1 << 40) == 65535)
        // 1,000-device chunk jobs: twice the budget's worth of devices, no more.
        #expect(PrefetchTuning.prefetch(meanDevices: 1000, meanBytes: 70_000, maxInFlight: 4000, maxBytesInFlight: 64 << 20) == 10)
        // 100-device jobs: 80.
        #expect(PrefetchTuning.prefetch(meanDevices: 100, meanBytes: 7_000, maxInFlight: 4000, maxBytesInFlight: 64 << 20) == 80)
        // Big bodies with few devices: the bytes decide (64 MiB / 2 / 1 MiB = 32).
        #expect(PrefetchTuning.prefetch(meanDevices: 1, meanBytes: 1_048_576, maxInFlight: 4000, maxBytesInFlight: 64 << 20) == 32)
    }

    /// Feeds `count` jobs of one size at `now`; returns the last prefetch the tuning asked for.
    private static func feed(_ tuning: inout PrefetchTuning, _ count: Int, devices: Int, bodyBytes: Int,
                             at now: ContinuousClock.Instant) -> UInt16? {
        var changed: UInt16?
        for _ in 0..<count { changed = tuning.observe(devices: devices, bodyBytes: bodyBytes, now: now) ?? changed }
        return changed
    }

    @Test func theTuningChangesThePrefetchOnlyByTwofoldStepsAfterAWindow() {
        let start = ContinuousClock.now
        var tuning = PrefetchTuning(initial: 100, maxInFlight: 4000, maxBytesInFlight: 64 << 20)
        for _ in 1..<PrefetchTuning.window { #expect(tuning.observe(devices: 1, bodyBytes: 300, now: start) == nil) }
        #expect(tuning.observe(devices: 1, bodyBytes: 300, now: start) == 8000, "the first change comes at once")
        #expect(Self.feed(&tuning, PrefetchTuning.window, devices: 1, bodyBytes: 400, at: start + .seconds(60)) == nil,
                "8000 again: no change")
        #expect(Self.feed(&tuning, PrefetchTuning.window, devices: 1000, bodyBytes: 70_000, at: start + .seconds(60)) == 10)
    }

    @Test func largeJobsShrinkThePrefetchBeforeTheWindowIsFull() {
        let start = ContinuousClock.now
        var tuning = PrefetchTuning(initial: 100, maxInFlight: 4000, maxBytesInFlight: 64 << 20)
        // 1,000-device chunk jobs: after 8 of them the jobs seen name twice the budget.
        for _ in 1..<8 { #expect(tuning.observe(devices: 1000, bodyBytes: 70_000, now: start) == nil) }
        #expect(tuning.observe(devices: 1000, bodyBytes: 70_000, now: start) == 10)
        // One-device jobs still wait for a whole window (and the rise for its dwell).
        let later = start + PrefetchTuning.riseDwell
        for _ in 1..<PrefetchTuning.window { #expect(tuning.observe(devices: 1, bodyBytes: 300, now: later) == nil) }
        #expect(tuning.observe(devices: 1, bodyBytes: 300, now: later) == 8000)
    }

    /// The mix that made a cluster's channels crash: one-device jobs and a big group's chunk jobs
    /// in turns swung the prefetch 8000 → 481 → 8000 every few windows. Rises now wait 30 s after
    /// any change and falls 5 s: over a minute of alternating windows, at most four changes.
    @Test func alternatingJobSizesChangeThePrefetchAFewTimesAMinuteAtMost() {
        let start = ContinuousClock.now
        var tuning = PrefetchTuning(initial: 100, maxInFlight: 4000, maxBytesInFlight: 64 << 20)
        var changes: [(Duration, UInt16)] = []
        for step in 0..<600 {
            let at = start + .milliseconds(100 * step)
            let small = step % 2 == 0
            if let prefetch = Self.feed(&tuning, small ? PrefetchTuning.window : 8, devices: small ? 1 : 1000,
                                        bodyBytes: small ? 300 : 70_000, at: at) {
                changes.append((at - start, prefetch))
            }
        }
        #expect(changes.count <= 5, "\(changes)")
        for (earlier, later) in zip(changes, changes.dropFirst()) where later.1 > earlier.1 {
            #expect(later.0 - earlier.0 >= PrefetchTuning.riseDwell, "a rise within 30 s of a change: \(changes)")
        }
        for (earlier, later) in zip(changes, changes.dropFirst()) {
            #expect(later.0 - earlier.0 >= PrefetchTuning.fallDwell, "two changes within 5 s: \(changes)")
        }
        // A fall is not held back for the rise's dwell: memory first.
        var falling = PrefetchTuning(initial: 100, maxInFlight: 4000, maxBytesInFlight: 64 << 20)
        #expect(Self.feed(&falling, PrefetchTuning.window, devices: 1, bodyBytes: 300, at: start) == 8000)
        #expect(Self.feed(&falling, 8, devices: 1000, bodyBytes: 70_000, at: start + .seconds(1)) == nil)
        #expect(Self.feed(&falling, 8, devices: 1000, bodyBytes: 70_000, at: start + PrefetchTuning.fallDwell) == 10)
    }

    @Test func aNewPrefetchRestartsTheConsumerOnlyWhileConsuming() {
        var state = ConsumptionState(prefetch: 100)
        #expect(state.retune(prefetch: 200) == .none, "not consuming yet: used when it starts")
        #expect(state.prefetch == 200)
        #expect(state.open() == .startConsuming)
        #expect(state.retune(prefetch: 200) == .none)
        #expect(state.retune(prefetch: 1000) == .restartConsuming)
        #expect(state.pause(.memory) == .stopConsuming)
        #expect(state.retune(prefetch: 10) == .none)
        #expect(state.resume(.memory) == .startConsuming)
        #expect(state.prefetch == 10)
    }
}
