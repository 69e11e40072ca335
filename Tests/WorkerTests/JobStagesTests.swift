import APNsCore
import PushCore
import Testing
@testable import Worker

@Suite("Job stages: every step from the plan to settling")
struct JobStagesTests {
    private static let now = UnixTime(milliseconds: 1_700_000_000_000)
    private static let past = now.seconds - 1
    private static func token(_ seed: Int) -> DeviceToken {
        DeviceToken(trustedHex: String(repeating: "0", count: 60) + String(format: "%04x", seed))
    }
    private static func job(tokens: Int = 1, groups: [String] = [], bulk: Bool = false, expiration: Int = 0,
                            channel: String? = nil) -> PushJob {
        var options = APNsJobOptions()
        options.channel = channel
        return PushJob(id: "j", app: "news", tokens: (0..<tokens).map(token), groups: groups, bulk: bulk, expiration: expiration,
                       options: options, payload: Array("{}".utf8))
    }
    private static func plan(_ job: PushJob) -> JobPlan {
        JobPlan.decide(.success(job), chunkSize: 10, now: now)
    }
    private static func stages(inBulkLane: Bool = false) -> JobStages {
        JobStages(inBulkLane: inBulkLane, now: now)
    }
    private static func notHeld(_: String) -> Bool { false }
    private static func held(_: String) -> Bool { true }

    // MARK: Plans that are no job to send

    @Test func aRejectionIsRejected() {
        let rejection = JobRejection(field: "tokens", "bad")
        var stages = Self.stages()
        let step = stages.first(.reject(rejection), isHeld: Self.held)
        #expect(step == .reject(rejection))
    }

    @Test func anUnknownAppIsHeldOrRejected() {
        let rejection = JobRejection(field: "app", "unknown app \"radio\"")
        var stages = Self.stages()
        let step = stages.first(.unknownApp("radio", rejection: rejection), isHeld: Self.notHeld)
        #expect(step == .holdOrReject(app: "radio", rejection: rejection))
    }

    @Test func aChannelOperationIsCarriedOut() throws {
        let body = Array(#"{"app":"news","channel_op":"delete","channel":"dGVzdA=="}"#.utf8)
        let operation = try ChannelOperation(body, messageID: "op", makeID: { "made" }, isChannelID: { _ in true })
        var stages = Self.stages()
        let step = stages.first(.manageChannel(operation), isHeld: Self.held)
        #expect(step == .manageChannel(operation))
    }

    // MARK: Sending named devices

    @Test func aValidJobInItsLaneIsSentAndSettledWithTheRoundsTiming() {
        let job = Self.job(tokens: 3)
        var stages = Self.stages()
        let first = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(first == .send(job, job.tokens))
        #expect(stages.sent(3) == .settle(job, timed: true))
        #expect(stages.sent(0) == .settle(job, timed: true))
    }

    @Test func theGateIsAskedAboutTheJobsAppOnly() {
        var asked: [String] = []
        var stages = Self.stages()
        _ = stages.first(Self.plan(Self.job())) { app in
            asked.append(app)
            return false
        }
        #expect(asked == ["news"])
    }

    @Test func aHeldAppsJobIsHeldBack() {
        let job = Self.job()
        var stages = Self.stages()
        let step = stages.first(Self.plan(job), isHeld: Self.held)
        #expect(step == .holdBack(job))
    }

    @Test func aHeldAppsExpiredJobFailsAtOnce() {
        let job = Self.job(tokens: 2, expiration: Self.past)
        var stages = Self.stages()
        let step = stages.first(Self.plan(job), isHeld: Self.held)
        #expect(step == .fail(job, job.tokens, reason: "Expired"))
        #expect(stages.failed() == .settle(job, timed: false))
    }

    @Test func anExpiredJobFailsEachDeviceUnsent() {
        let job = Self.job(tokens: 2, expiration: Self.past)
        var stages = Self.stages()
        let step = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(step == .fail(job, job.tokens, reason: "Expired"))
        #expect(stages.failed() == .settle(job, timed: false))
    }

    @Test func withoutItsAppTheDevicesFail() {
        let job = Self.job(tokens: 2)
        var stages = Self.stages()
        _ = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(stages.noApp() == .fail(job, job.tokens, reason: "AppChangedPlatform"))
        #expect(stages.failed() == .settle(job, timed: false))
    }

    @Test func aJobWithoutDevicesIsSettledUnsent() {
        let job = Self.job(tokens: 0)
        var stages = Self.stages()
        let step = stages.first(.send(job), isHeld: Self.notHeld)
        #expect(step == .settle(job, timed: false))
    }

    // MARK: The bulk lane

    @Test func aBulkJobOutsideTheBulkLaneMovesThere() {
        let job = Self.job(bulk: true)
        for held in [true, false] {
            var stages = Self.stages(inBulkLane: false)
            let step = stages.first(Self.plan(job)) { _ in held }
            #expect(step == .moveToBulkLane(job))
        }
        // Expired, it moves all the same: it fails from the lane.
        let expired = Self.job(bulk: true, expiration: Self.past)
        var stages = Self.stages(inBulkLane: false)
        let step = stages.first(Self.plan(expired), isHeld: Self.notHeld)
        #expect(step == .moveToBulkLane(expired))
    }

    @Test func aBulkJobInTheBulkLaneIsSent() {
        let job = Self.job(bulk: true)
        var stages = Self.stages(inBulkLane: true)
        let step = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(step == .send(job, job.tokens))
    }

    @Test func aTransactionalJobIsSentFromEitherLane() {
        // Only a bulk job outside the lane moves.
        let job = Self.job()
        var stages = Self.stages(inBulkLane: true)
        let step = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(step == .send(job, job.tokens))
    }

    // MARK: Broadcasts

    @Test func aBroadcastIsPreparedSentAndNoted() {
        let job = Self.job(tokens: 1, expiration: Self.now.seconds + 60, channel: "ch")
        var stages = Self.stages()
        let first = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(first == .prepareBroadcast(job, channel: "ch"))
        var prepared = job
        prepared.expiration = 0
        #expect(stages.prepared(prepared) == .send(prepared, job.tokens))
        #expect(stages.sent(1) == .noteBroadcast(prepared, channel: "ch"))
        #expect(stages.noted() == .settle(prepared, timed: true))
    }

    @Test func aBroadcastThatWentNowhereIsNotNoted() {
        let job = Self.job(channel: "ch")
        var stages = Self.stages()
        _ = stages.first(Self.plan(job), isHeld: Self.notHeld)
        _ = stages.prepared(job)
        #expect(stages.sent(0) == .settle(job, timed: true))
    }

    @Test func aBroadcastWhoseRecordCannotBeReadStops() {
        var stages = Self.stages()
        _ = stages.first(Self.plan(Self.job(channel: "ch")), isHeld: Self.notHeld)
        #expect(stages.prepared(nil) == .stop)
    }

    @Test func anExpiredBroadcastIsNotPreparedButFails() {
        let job = Self.job(expiration: Self.past, channel: "ch")
        var stages = Self.stages()
        let step = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(step == .fail(job, job.tokens, reason: "Expired"))
    }

    // MARK: Fan-outs

    @Test func groupsAreFannedOutAndTheInlineDevicesSent() {
        let job = Self.job(tokens: 0, groups: ["fans"])
        let inline = [Self.token(7), Self.token(8)]
        var stages = Self.stages()
        let first = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(first == .fanOut(job))
        #expect(stages.fannedOut(inline) == .send(job, inline))
        #expect(stages.sent(2) == .settle(job, timed: true))
    }

    @Test func aLargeJobIsFannedOutEvenWithNamedDevices() {
        let job = Self.job(tokens: 11)
        var stages = Self.stages()
        let first = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(first == .fanOut(job))
    }

    @Test func aFanOutThatSettledOrLeftTheDeliveryStops() {
        var stages = Self.stages()
        _ = stages.first(Self.plan(Self.job(tokens: 0, groups: ["fans"])), isHeld: Self.notHeld)
        #expect(stages.fannedOut(nil) == .stop)
    }

    @Test func aFanOutWithNoMembersIsSettledUnsent() {
        let job = Self.job(tokens: 0, groups: ["empty"])
        var stages = Self.stages()
        _ = stages.first(Self.plan(job), isHeld: Self.notHeld)
        #expect(stages.fannedOut([]) == .settle(job, timed: false))
    }

    @Test func anExpiredGroupJobFailsItsMembersAfterExpansion() {
        let job = Self.job(tokens: 0, groups: ["fans"], expiration: Self.past)
        let members = [Self.token(1), Self.token(2)]
        var stages = Self.stages()
        // Held app or not: its members are only known once expanded.
        let first = stages.first(Self.plan(job), isHeld: Self.held)
        #expect(first == .fanOut(job))
        #expect(stages.fannedOut(members) == .fail(job, members, reason: "Expired"))
        #expect(stages.failed() == .settle(job, timed: false))
    }

    @Test func aHeldAppsGroupJobIsHeldBackBeforeExpanding() {
        let job = Self.job(tokens: 0, groups: ["fans"])
        var stages = Self.stages()
        let step = stages.first(Self.plan(job), isHeld: Self.held)
        #expect(step == .holdBack(job))
    }

    // MARK: The task-free path: a first step `.send`

    @Test func onlyAValidNamedJobInItsLaneWithItsAppFreeStartsBySending() {
        func startsBySending(_ plan: JobPlan, inBulkLane: Bool = false, isHeld: (String) -> Bool = Self.notHeld) -> Bool {
            var stages = Self.stages(inBulkLane: inBulkLane)
            if case .send = stages.first(plan, isHeld: isHeld) { return true }
            return false
        }
        #expect(startsBySending(Self.plan(Self.job(tokens: 10))))
        #expect(startsBySending(Self.plan(Self.job(bulk: true)), inBulkLane: true))
        #expect(!startsBySending(Self.plan(Self.job(bulk: true))))
        #expect(!startsBySending(Self.plan(Self.job()), isHeld: Self.held))
        #expect(!startsBySending(Self.plan(Self.job(expiration: Self.past))))
        #expect(!startsBySending(Self.plan(Self.job(channel: "ch"))))
        #expect(!startsBySending(Self.plan(Self.job(tokens: 11))))
        #expect(!startsBySending(Self.plan(Self.job(tokens: 1, groups: ["g"]))))
        #expect(!startsBySending(.send(Self.job(tokens: 0))))
        #expect(!startsBySending(.reject(JobRejection(field: nil, "no"))))
    }
}
