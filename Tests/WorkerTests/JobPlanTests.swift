import PushCore
import Testing
@testable import Worker

@Suite("Job plan: one decision for both paths")
struct JobPlanTests {
    private static let now = UnixTime(milliseconds: 1_700_000_000_000)
    private static func token(_ seed: Int) -> DeviceToken {
        DeviceToken(trustedHex: String(repeating: "0", count: 60) + String(format: "%04x", seed))
    }
    private static func job(tokens: Int = 1, groups: [String] = [], expiration: Int = 0) -> PushJob {
        PushJob(id: "j", tokens: (0..<tokens).map(token), groups: groups, expiration: expiration, payload: Array("{}".utf8))
    }
    private func decide(_ job: PushJob, chunkSize: Int = 1000) -> JobPlan {
        JobPlan.decide(.success(job), chunkSize: chunkSize, now: Self.now)
    }

    @Test func aRejectionIsRejected() {
        guard case .reject(let rejection) = JobPlan.decide(.failure(JobRejection(field: "tokens", "bad")), chunkSize: 10, now: Self.now) else {
            Issue.record("not a rejection")
            return
        }
        #expect(rejection.field == "tokens")
    }

    @Test func anUnknownAppIsPlannedApartFromOtherRejections() {
        let rejection = JobRejection(field: "app", "unknown app \"news\"")
        guard case .unknownApp(let app, let kept) = JobPlan.decide(.failure(rejection), unknownApp: "news", chunkSize: 10, now: Self.now) else {
            Issue.record("not held as an unknown app")
            return
        }
        #expect(app == "news" && kept == rejection)
    }

    @Test func namedDevicesWithinAChunkAreSent() {
        let plan = decide(Self.job(tokens: 1000))
        guard case .send(let job) = plan else { Issue.record("\(plan)"); return }
        #expect(job.tokens.count == 1000)
    }

    @Test func groupsOrMoreThanAChunkAreExpanded() {
        for job in [Self.job(tokens: 0, groups: ["news"]), Self.job(tokens: 1, groups: ["news"]), Self.job(tokens: 11)] {
            let plan = decide(job, chunkSize: 10)
            guard case .expand = plan else { Issue.record("\(plan)"); continue }
        }
    }

    @Test func anExpiredJobIsReportedNotSent() {
        let plan = decide(Self.job(expiration: Self.now.seconds - 1))
        guard case .expire = plan else { Issue.record("\(plan)"); return }
        guard case .send = decide(Self.job(expiration: Self.now.seconds + 60)) else { Issue.record("still valid"); return }
        guard case .send = decide(Self.job(expiration: 0)) else { Issue.record("0: no expiration"); return }
    }

    @Test func anExpiredGroupJobIsStillExpandedFirst() {
        // Its members are only known after expansion; each then gets delivery.failed "Expired".
        guard case .expand = decide(Self.job(tokens: 0, groups: ["g"], expiration: Self.now.seconds - 1)) else {
            Issue.record("not expanded")
            return
        }
    }
}
