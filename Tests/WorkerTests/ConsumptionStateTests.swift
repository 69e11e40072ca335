import APNs
import APNsCore
import PushCore
import Testing
@testable import Worker

@Suite("Consumption state machine")
struct ConsumptionStateTests {
    @Test func consumesOnceOpenedAndStopsOnFirstPause() {
        var state = ConsumptionState()
        #expect(!state.isConsuming)
        #expect(state.open() == .startConsuming)
        #expect(state.open() == .none)
        #expect(state.pause(.resultsUnpublishable) == .stopConsuming)
        #expect(state.pause(.credentials(app: "a")) == .none)   // already stopped
        #expect(!state.isConsuming)
    }

    @Test func resumesOnlyWhenTheLastReasonIsLifted() {
        var state = ConsumptionState()
        _ = state.open()
        _ = state.pause(.resultsUnpublishable)
        _ = state.pause(.platformUnavailable(app: "a"))
        #expect(state.resume(.resultsUnpublishable) == .none)
        #expect(state.resume(.resultsUnpublishable) == .none)    // not paused for that any more
        #expect(state.resume(.platformUnavailable(app: "a")) == .startConsuming)
        #expect(state.isConsuming)
    }

    /// One app's trouble holds that app alone: consumption goes on for the others, and stops only
    /// once every app the worker serves is held (or for a reason of the whole worker).
    @Test func anAppsTroubleHoldsThatAppAloneUntilEveryAppIsHeld() {
        var state = ConsumptionState(apps: ["a", "b"])
        #expect(state.open() == .startConsuming)
        #expect(state.pause(.credentials(app: "a")) == .none)
        #expect(state.isConsuming && state.isHeld(app: "a") && !state.isHeld(app: "b"))
        #expect(state.heldApps == ["a"])
        #expect(state.pause(.platformUnavailable(app: "b")) == .stopConsuming)
        #expect(!state.isConsuming)
        #expect(state.resume(.platformUnavailable(app: "b")) == .startConsuming)
        #expect(state.pause(.memory) == .stopConsuming)
        #expect(state.resume(.credentials(app: "a")) == .none)     // still paused for memory
        #expect(!state.isHeld(app: "a"))
        #expect(state.resume(.memory) == .startConsuming)
    }

    /// A worker serving one app pauses for that app's trouble, as before: its jobs stay in the queue.
    /// A reload: holds of apps taken out or renewed are lifted (the cause may be gone), other
    /// holds stay, and consumption comes back once not every app is held.
    @Test func aReloadLiftsTheHoldsOfRenewedAndRemovedApps() {
        var state = ConsumptionState(apps: ["a", "b"])
        _ = state.open()
        _ = state.pause(.credentials(app: "a"))
        let bothHeld = state.pause(.platformUnavailable(app: "b"))
        #expect(bothHeld == .stopConsuming)
        let renewed = state.appsChanged(to: ["a", "b"], renewed: ["a"])
        #expect(renewed == .startConsuming)
        #expect(!state.isHeld(app: "a") && state.isHeld(app: "b"))
        let removed = state.appsChanged(to: ["a", "c"], renewed: ["c"])
        #expect(removed == .none)
        #expect(state.heldApps.isEmpty && state.apps == ["a", "c"])
        _ = state.pause(.credentials(app: "a"))
        let onlyOther = state.pause(.credentials(app: "c"))
        #expect(onlyOther == .stopConsuming)
        let kept = state.appsChanged(to: ["a", "c"], renewed: [])
        #expect(kept == .none && !state.isConsuming, "unchanged apps stay held")
    }

    @Test func theOnlyAppsTroublePausesConsumption() {
        var state = ConsumptionState(apps: ["a"])
        _ = state.open()
        #expect(state.pause(.credentials(app: "a")) == .stopConsuming)
        #expect(state.resume(.credentials(app: "a")) == .startConsuming)
    }

    @Test func aPauseBeforeOpenHoldsTheStart() {
        var state = ConsumptionState()
        #expect(state.pause(.memory) == .none)
        #expect(state.open() == .none)
        #expect(state.resume(.memory) == .startConsuming)
    }

    @Test func stopWinsOverEveryResume() {
        var state = ConsumptionState()
        _ = state.open()
        _ = state.pause(.redisConfiguration)
        #expect(state.stop() == .stopConsuming)
        #expect(state.stop() == .none)
        #expect(state.resume(.redisConfiguration) == .none)
        #expect(state.consumerLost() == .none)
        #expect(!state.isConsuming)
    }

    @Test func aLostConsumerComesBackOnlyWhenNothingHoldsItBack() {
        var state = ConsumptionState()
        _ = state.open()
        #expect(state.consumerLost() == .startConsuming)
        _ = state.pause(.credentials(app: "a"))
        #expect(state.consumerLost() == .none)
    }
}

@Suite("Body bytes in flight")
struct BodyBytesInFlightTests {
    /// Each body counts twice (the delivery's bytes and the job's payload).
    @Test func pausesAboveTheCapAndResumesBelowHalf() {
        let bytes = BodyBytesInFlight(cap: 200)
        #expect(bytes.take(60) == .none)          // 120 counted
        #expect(bytes.take(60) == .pause)         // 240
        #expect(bytes.take(10) == .none)          // already paused
        #expect(bytes.give(60) == .none)          // 140 counted: above half
        #expect(bytes.give(30) == .resume)        // 80
        #expect(bytes.give(40) == .none)
        #expect(bytes.held == 0)
    }

    /// The AMQP thread asks for room before it reads a body: what does not fit is refused (the
    /// delivery goes back to the queue) and consumption pauses until half the cap is free. With
    /// nothing held, any body fits, so one larger than the cap still runs alone.
    @Test func aBodyWithoutRoomIsRefusedAndConsumptionResumesAtHalf() {
        let bytes = BodyBytesInFlight(cap: 200)
        #expect(bytes.room == .max)
        #expect(bytes.take(70) == .none)          // 140 counted
        #expect(bytes.room == 30)
        #expect(bytes.refuse() == .pause)         // a body of 31 or more does not fit
        #expect(bytes.refuse() == .none)          // already paused
        #expect(bytes.take(30) == .none)          // a small one that fitted: 200, at the cap, not above
        #expect(bytes.room == 0)
        #expect(bytes.give(30) == .none)          // 140: above half
        #expect(bytes.give(70) == .resume)        // nothing held
        #expect(bytes.room == .max)
        #expect(bytes.take(500) == .pause)        // alone, larger than the cap: runs, and nothing else comes
        #expect(bytes.room == 0)
        #expect(bytes.give(500) == .resume)
    }
}
