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
        _ = state.pause(.apnsUnavailable(app: "a"))
        #expect(state.resume(.resultsUnpublishable) == .none)
        #expect(state.resume(.resultsUnpublishable) == .none)    // not paused for that any more
        #expect(state.resume(.apnsUnavailable(app: "a")) == .startConsuming)
        #expect(state.isConsuming)
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
    @Test func pausesAboveTheCapAndResumesBelowHalf() {
        let bytes = BodyBytesInFlight(cap: 100)
        #expect(bytes.take(60) == .none)
        #expect(bytes.take(60) == .pause)
        #expect(bytes.take(10) == .none)          // already paused
        #expect(bytes.give(60) == .none)          // 70 held: above half
        #expect(bytes.give(30) == .resume)        // 40 held
        #expect(bytes.give(40) == .none)
        #expect(bytes.held == 0)
    }
}
