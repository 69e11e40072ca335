import OwnerThread
import Testing

/// What `/livez` reads: only a loop that left its wait and has not come back counts as running.
@Suite struct LoopHeartbeatTests {
    private static func listed(_ heartbeat: LoopHeartbeat) -> Bool {
        LoopHeartbeat.stuck(longerThan: .seconds(-1)).contains { $0.name == heartbeat.name }
    }

    @Test func aLoopIsRunningOnlyBetweenLeavingItsWaitAndComingBack() {
        let heartbeat = LoopHeartbeat(name: "heartbeat test \(UInt64.random(in: 0 ... .max))")
        // Made, not started: an object whose thread never ran is not stuck.
        #expect(heartbeat.running(at: .max) == nil)
        #expect(!Self.listed(heartbeat))
        heartbeat.running()
        #expect(heartbeat.running(at: .max) != nil)
        #expect(Self.listed(heartbeat))
        heartbeat.waiting()
        #expect(!Self.listed(heartbeat))
        heartbeat.running()
        // Ended while running (its thread returned): the object may live on, but nothing turns.
        heartbeat.stopped()
        #expect(heartbeat.running(at: .max) == nil)
        #expect(!Self.listed(heartbeat))
    }
}
