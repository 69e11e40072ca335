import AMQP
import PushCore
import Testing
@testable import Worker

@Suite struct DelayQueueEntryTests {
    let lanes: Set<String> = ["push.jobs", "push.jobs.bulk"]

    @Test func marksAndReadsBackDueTimeAndLane() {
        var properties = AMQPProperties()
        properties.expiration = "1000"
        DelayQueueEntry.mark(&properties, due: UnixTime(milliseconds: 5_000), lane: "push.jobs.bulk")
        #expect(properties.expiration == nil && properties.persistent)
        let entry = DelayQueueEntry(headers: properties.headers, lanes: lanes, defaultLane: "push.jobs")
        #expect(entry == DelayQueueEntry(headers: ["x-pushworker-due": .int(5_000), "x-pushworker-lane": .string("push.jobs.bulk")],
                                         lanes: lanes, defaultLane: "push.jobs"))
        #expect(entry.due.milliseconds == 5_000 && entry.lane == "push.jobs.bulk")
    }

    @Test func waitsUntilDueNeverLongerThanTheHoldLimit() {
        let entry = DelayQueueEntry(headers: ["x-pushworker-due": .int(10_000)], lanes: lanes, defaultLane: "push.jobs")
        #expect(entry.wait(now: UnixTime(milliseconds: 4_000), longest: .seconds(60)) == .milliseconds(6_000))
        #expect(entry.wait(now: UnixTime(milliseconds: 10_000), longest: .seconds(60)) == .zero)
        #expect(entry.wait(now: UnixTime(milliseconds: 12_000), longest: .seconds(60)) == .zero)
        // A due time far ahead (a clock gone wrong) is held no longer than the limit.
        #expect(entry.wait(now: UnixTime(milliseconds: 0), longest: .seconds(2)) == .seconds(2))
        let farPast = DelayQueueEntry(headers: ["x-pushworker-due": .int(.min)], lanes: lanes, defaultLane: "push.jobs")
        #expect(farPast.wait(now: UnixTime(milliseconds: .max), longest: .seconds(2)) == .zero)
    }

    /// Whatever is in the delay queue, the worker publishes only to its own lanes, at once if unmarked.
    @Test func unmarkedOrForeignEntriesGoToTheJobQueueAtOnce() {
        let unmarked = DelayQueueEntry(headers: [:], lanes: lanes, defaultLane: "push.jobs")
        #expect(unmarked.lane == "push.jobs")
        #expect(unmarked.wait(now: .now(), longest: .seconds(60)) == .zero)
        let foreign = DelayQueueEntry(headers: ["x-pushworker-lane": .string("payments"), "x-pushworker-due": .string("soon")],
                                      lanes: lanes, defaultLane: "push.jobs")
        #expect(foreign.lane == "push.jobs" && foreign.due.milliseconds == 0)
    }

    @Test func releasedCopyLosesTheBookkeepingKeepsTheRest() {
        var properties = AMQPProperties()
        properties.messageID = "job-1"
        properties.headers = ["x-pushworker-deferrals": .int(2), "x-delivery-count": .int(1)]
        DelayQueueEntry.mark(&properties, due: UnixTime(milliseconds: 1), lane: "push.jobs")
        let released = DelayQueueEntry.released(properties)
        #expect(released.headers == ["x-pushworker-deferrals": .int(2)])
        #expect(released.messageID == "job-1" && released.persistent)
    }

    @Test func releaseStepLeavesOnStopAndForgetsAnotherConnectionsDelivery() {
        #expect(DelayQueueEntry.releaseStep(stopping: false, deliveredOn: 3, connected: 3) == .publish)
        #expect(DelayQueueEntry.releaseStep(stopping: true, deliveredOn: 3, connected: 3) == .leave)
        #expect(DelayQueueEntry.releaseStep(stopping: false, deliveredOn: 3, connected: 4) == .forget)
        #expect(DelayQueueEntry.releaseStep(stopping: false, deliveredOn: 3, connected: nil) == .forget)
    }

    @Test func classicRoutesToTheLaddersQueueQuorumToTheDelayQueue() throws {
        var configuration = WorkerConfiguration(amqp: AMQPConfiguration(url: "amqp://127.0.0.1/"), redis: try .init(url: "redis://127.0.0.1"), apps: [:])
        let wait = try #require(configuration.retry.delayQueue(afterAttempts: 1))
        var properties = AMQPProperties()
        #expect(configuration.delayRoute(wait, bulk: false, properties: &properties, now: UnixTime(milliseconds: 1_000)) == wait.name)
        #expect(properties.headers.isEmpty)
        configuration.queueType = .quorum
        #expect(configuration.delayRoute(wait, bulk: true, properties: &properties, now: UnixTime(milliseconds: 1_000)) == "push.jobs.delay")
        let entry = DelayQueueEntry(headers: properties.headers, lanes: lanes, defaultLane: "push.jobs")
        #expect(entry.lane == "push.jobs.bulk")
        #expect(entry.due.milliseconds == 1_000 + DurationText.milliseconds(wait.delay))
    }
}
