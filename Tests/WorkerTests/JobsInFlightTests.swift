import Testing
@testable import Worker

@Suite("Jobs in flight")
struct JobsInFlightTests {
    @Test func drainedWaitsForTheLastJobAfterClose() async {
        let jobs = JobsInFlight()
        #expect(jobs.start())
        #expect(jobs.start())
        let drained = Task { () -> ContinuousClock.Instant in
            await jobs.drained()
            return .now
        }
        #expect(jobs.finish() == 1)
        jobs.close()
        #expect(!jobs.start(), "no job starts once closed")
        try? await Task.sleep(for: .milliseconds(50))
        let lastFinished = ContinuousClock.now
        #expect(jobs.finish() == 0)
        #expect(await drained.value >= lastFinished, "drained before the last job finished")
    }

    @Test func drainedReturnsAtOnceWhenClosedAndIdle() async {
        let jobs = JobsInFlight()
        jobs.close()
        await jobs.drained()
        #expect(!jobs.start())
    }

    @Test func closeWakesAWaiterWhenNothingIsInFlight() async {
        let jobs = JobsInFlight()
        let drained = Task { await jobs.drained() }
        try? await Task.sleep(for: .milliseconds(20))
        jobs.close()
        await drained.value
    }
}
