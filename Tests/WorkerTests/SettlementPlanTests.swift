import AMQP
import APNsCore
import PushCore
import PushTransport
import Testing
@testable import Worker

/// What a job owes the broker, from its devices' answers alone: no RabbitMQ. The integration
/// suites prove the same messages reach the real broker (`RetryTests`, `PruneTests`, `FaultTests`).
@Suite struct SettlementPlanTests {
    static let time = UnixTime(milliseconds: 1_800_000_000_000)

    static func configuration(queueType: QueueType = .classic, completion: CompletionEvents = .all) throws -> WorkerConfiguration {
        var configuration = WorkerConfiguration(amqp: AMQPConfiguration(url: "amqp://127.0.0.1/"), redis: try .init(url: "redis://127.0.0.1"), apps: [:])
        configuration.retry = RetryPolicy(delays: [.seconds(1), .seconds(5)], jobQueue: configuration.jobQueue)
        configuration.queueType = queueType
        configuration.completionEvents = completion
        return configuration
    }

    static func device(_ name: String) -> DeviceToken { DeviceToken(identity: name, given: name) }

    static func plan(_ answers: [(String, PushResult)], attempts: Int = 0, bulk: Bool = false,
                     configuration: WorkerConfiguration) -> SettlementPlan {
        let devices = answers.map { device($0.0) }
        let job = PushJob(id: "job-1", app: "news", tokens: devices, bulk: bulk, options: APNsJobOptions(), payload: Array("{}".utf8),
                          attempts: attempts)
        var settlement = Settlement(job: job, now: time)
        settlement.record(devices, answers.map(\.1), retry: configuration.retryPolicy(bulk: bulk))
        return SettlementPlan(settlement, configuration: configuration, time: time)
    }

    static func members(_ body: [UInt8]) throws -> [String: JSONValue] {
        guard case let .object(members) = try JSONValue.parse(body) else { throw PlanProblem("not a JSON object") }
        return members
    }

    static func tokens(_ body: [UInt8]) throws -> [String] {
        guard case let .array(values)? = try members(body)["tokens"] else { throw PlanProblem("no tokens") }
        return values.compactMap { if case let .string(token) = $0 { token } else { nil } }
    }

    static func attempts(_ body: [UInt8]) throws -> Int64? {
        if case let .int(count)? = try members(body)["attempts"] { count } else { nil }
    }

    struct PlanProblem: Error { let text: String; init(_ text: String) { self.text = text } }

    static let sent = PushResult(status: 200, reason: nil, outcome: .sent)
    static let invalid = PushResult(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_000, outcome: .tokenInvalid(reason: "Unregistered"))
    static let refused = PushResult(status: 400, reason: "BadDeviceToken", outcome: .permanentFailure(reason: "BadDeviceToken"))
    static let busy = PushResult(status: 429, reason: "TooManyRequests", outcome: .retryable(reason: "TooManyRequests"))
    static let unreachable = PushResult(status: 0, reason: nil, outcome: .unavailable(reason: "connection refused"))
    static let keyRevoked = PushResult(status: 403, reason: "InvalidProviderToken", outcome: .credentialsProblem(reason: "InvalidProviderToken"))

    @Test func aDeliveredJobOwesOnlyJobCompleted() throws {
        let plan = Self.plan([("a", Self.sent)], configuration: try Self.configuration())
        #expect(plan.messages.isEmpty, "no array for the common case")
        let completion = try #require(plan.completion)
        #expect(completion.routingKey == "job.completed" && completion.exchange == "push.results")
        let body = try Self.members(completion.body)
        #expect(body["job_id"] == .string("job-1") && body["sent"] == .int(1))
        #expect(plan.eventCount == 1 && plan.credentialsRefused == nil && plan.platformUnreachable == nil)
    }

    @Test func eachAnswerGoesWhereItBelongsInOrder() throws {
        let plan = Self.plan([("a", Self.sent), ("b", Self.invalid), ("c", Self.refused), ("d", Self.busy), ("e", Self.unreachable)],
                             configuration: try Self.configuration())
        let keys = plan.messages.map(\.routingKey)
        #expect(keys == ["token.invalid", "delivery.failed", "push.jobs.retry.1s", "push.jobs"])
        let invalid = try Self.members(plan.messages[0].body)
        #expect(invalid["token"] == .string("b") && invalid["reason"] == .string("Unregistered"))
        let failed = try Self.members(plan.messages[1].body)
        #expect(failed["token"] == .string("c") && failed["attempts"] == .int(1))
        // The retry: only the retryable device, one attempt used, to the first delay queue.
        #expect(try Self.tokens(plan.messages[2].body) == ["d"])
        #expect(try Self.attempts(plan.messages[2].body) == 1)
        #expect(plan.messages[2].mandatory && plan.messages[2].properties.messageID == "job-1")
        // The held device: back to the job queue, its attempt untouched.
        #expect(try Self.tokens(plan.messages[3].body) == ["e"])
        #expect(try Self.attempts(plan.messages[3].body) ?? 0 == 0)
        #expect(plan.platformUnreachable == "connection refused")
        #expect(plan.delaysPublished == [.seconds(1)])
        let completion = try Self.members(try #require(plan.completion).body)
        #expect(completion["sent"] == .int(1) && completion["invalid"] == .int(1) && completion["failed"] == .int(1))
        #expect(plan.eventCount == 3)
    }

    @Test func theLastAttemptFailsInsteadOfRetrying() throws {
        let plan = Self.plan([("a", Self.busy)], attempts: 2, configuration: try Self.configuration())
        #expect(plan.messages.map(\.routingKey) == ["delivery.failed"])
        let failed = try Self.members(plan.messages[0].body)
        #expect(failed["attempts"] == .int(3) && failed["reason"] == .string("TooManyRequests"))
        #expect(plan.delaysPublished.isEmpty)
    }

    @Test func refusedCredentialsHoldTheAppAndKeepTheDevices() throws {
        let plan = Self.plan([("a", Self.keyRevoked), ("b", Self.keyRevoked)], attempts: 1, configuration: try Self.configuration())
        #expect(plan.credentialsRefused == "InvalidProviderToken")
        #expect(plan.messages.map(\.routingKey) == ["push.jobs"])
        #expect(try Self.tokens(plan.messages[0].body) == ["a", "b"])
        #expect(try Self.attempts(plan.messages[0].body) == 1, "no attempt used")
    }

    @Test func aBulkJobStaysInItsLane() throws {
        let plan = Self.plan([("a", Self.busy), ("b", Self.unreachable)], bulk: true, configuration: try Self.configuration())
        #expect(plan.messages.map(\.routingKey) == ["push.jobs.bulk.retry.1s", "push.jobs.bulk"])
    }

    @Test func withQuorumQueuesARetryGoesToTheDelayQueueMarkedWithItsLane() throws {
        let plan = Self.plan([("a", Self.busy)], configuration: try Self.configuration(queueType: .quorum))
        let retry = try #require(plan.messages.first)
        #expect(retry.routingKey == "push.jobs.delay")
        let entry = DelayQueueEntry(headers: retry.properties.headers, lanes: ["push.jobs", "push.jobs.bulk"], defaultLane: "none")
        #expect(entry.lane == "push.jobs")
        #expect(entry.due == UnixTime(milliseconds: Self.time.milliseconds + 1000))
    }

    @Test func completionEventsFollowTheSetting() throws {
        let quiet = Self.plan([("a", Self.sent)], configuration: try Self.configuration(completion: .none))
        #expect(quiet.completion == nil && quiet.messages.isEmpty && quiet.eventCount == 0)
        let failuresOnly = try Self.configuration(completion: .failures)
        #expect(Self.plan([("a", Self.sent)], configuration: failuresOnly).completion == nil)
        #expect(Self.plan([("a", Self.refused)], configuration: failuresOnly).completion != nil)
    }
}

/// A broadcast's answer is a broadcast event, never a token's: nothing to prune, nothing to blame a device for.
@Suite struct BroadcastSettlementTests {
    static let channel = "dHN0LXNyY2gtY2hubA=="

    static func plan(_ result: PushResult, attempts: Int = 0) throws -> SettlementPlan {
        var options = APNsJobOptions(pushType: .liveactivity)
        options.channel = channel
        let device = DeviceToken(identity: channel, given: channel)
        let job = PushJob(id: "b1", app: "scores", tokens: [device], options: options, payload: Array(#"{"aps":{}}"#.utf8), attempts: attempts)
        let configuration = try SettlementPlanTests.configuration()
        var settlement = Settlement(job: job, now: SettlementPlanTests.time)
        settlement.record(device, result, retry: configuration.retry)
        return SettlementPlan(settlement, configuration: configuration, time: SettlementPlanTests.time)
    }

    @Test func aSentBroadcastNamesItsChannelAndRequest() throws {
        let plan = try Self.plan(PushResult(status: 200, reason: nil, requestID: "0b2f7a1e-3c9d-4e8a-9f61-2d7c5b4a3e10", outcome: .sent))
        #expect(plan.messages.map(\.routingKey) == ["broadcast.sent"])
        let body = try SettlementPlanTests.members(plan.messages[0].body)
        #expect(body["channel"] == .string(Self.channel) && body["apns_request_id"] == .string("0b2f7a1e-3c9d-4e8a-9f61-2d7c5b4a3e10"))
        #expect(body["token"] == nil)
    }

    @Test func aFailedBroadcastIsNeverATokenEvent() throws {
        for result in [PushResult(status: 404, reason: "ChannelNotRegistered", outcome: .permanentFailure(reason: "ChannelNotRegistered")),
                       PushResult(status: 410, reason: "Unregistered", outcome: .tokenInvalid(reason: "Unregistered"))] {
            let plan = try Self.plan(result)
            #expect(plan.messages.map(\.routingKey) == ["broadcast.failed"], "\(result)")
            let body = try SettlementPlanTests.members(plan.messages[0].body)
            #expect(body["reason"] == .string(result.reason ?? "") && body["status"] == .int(Int64(result.status)) && body["attempts"] == .int(1))
        }
    }

    @Test func aBusyServiceRetriesTheBroadcastOnTheLadder() throws {
        let plan = try Self.plan(PushResult(status: 429, reason: "TooManyRequests", outcome: .retryable(reason: "TooManyRequests")))
        #expect(plan.messages.map(\.routingKey) == ["push.jobs.retry.1s"])
        let text = String(decoding: plan.messages[0].body, as: UTF8.self)
        #expect(text.contains(#""channel":"\#(Self.channel)""#) && !text.contains(#""tokens""#))
    }

    @Test func featureNotEnabledHoldsTheApp() throws {
        let outcome = DeliveryOutcome(apnsStatus: 403, reason: "FeatureNotEnabled")
        let plan = try Self.plan(PushResult(status: 403, reason: "FeatureNotEnabled", outcome: outcome))
        #expect(plan.credentialsRefused == "FeatureNotEnabled")
        #expect(plan.messages.map(\.routingKey) == ["push.jobs"], "the broadcast waits in the job queue, not dead-lettered")
    }
}
