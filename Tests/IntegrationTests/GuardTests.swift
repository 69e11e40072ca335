import AMQP
import Foundation
import PushCore
import Sandbox
import Testing
@testable import Worker

/// Guards against a configuration mistake being reported device by device (issue "guards").
@Suite(.serialized, .timeLimit(.minutes(3)))
struct GuardTests {
    @Test func aWrongEnvironmentPausesTheAppInsteadOfInvalidatingEveryToken() async throws {
        // What APNs answers for production tokens sent to the development endpoint (and back).
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(tokenPrefix: "f", status: 400, reason: "BadDeviceToken")] }) { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.credentialsRetryInterval = .seconds(600)
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let jobs = 150
            for index in 0..<jobs {
                try await fixture.publish(#"{"id":"env-\#(index)","tokens":["\#(PipelineFixture.token(3000 + index))"],"payload":{"aps":{"alert":"x"}}}"#)
            }
            // Observed progress: the app is paused for a configuration problem.
            let problem = try await Self.credentialProblem(of: worker)
            #expect(problem.contains("environment or topic mismatch?"))
            // Every device ends up either reported (before the breaker tripped) or back in the queue.
            var invalid = 0
            var held = 0
            let settleDeadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < settleDeadline {
                while let delivery = try await fixture.control.get(queue: fixture.eventQueue) {
                    if try PipelineFixture.Event(delivery).routingKey == "token.invalid" { invalid += 1 }
                }
                held = try await fixture.control.messageCount(queue: fixture.jobQueue)
                if invalid + held == jobs { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(invalid + held == jobs)
            #expect(invalid < ConfigurationBreaker.minimumMismatches)
            #expect(!worker.status.isHealthy)
        }
    }
}

extension GuardTests {
    /// Once the configuration is right again (here: the sandbox stops answering like the other
    /// environment), the paused app tries again after --credentials-retry-interval and every held
    /// device is delivered once; what was reported before the trip is not sent again.
    @Test func aPausedAppResumesAfterTheRetryIntervalAndDeliversWhatItHeld() async throws {
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(tokenPrefix: "f", status: 400, reason: "BadDeviceToken")] }) { fixture in
            // APNs' own timeout: under ASan on a loaded machine, answers the sandbox gave took
            // longer than the fixture's 5 s to be read; timed out, they were retried and accepted
            // twice (seen: 14 devices, each on a new connection under a new apns-id).
            var configuration = try fixture.workerConfiguration(requestTimeout: .seconds(30))
            configuration.credentialsRetryInterval = .milliseconds(500)
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let jobs = 120
            for index in 0..<jobs {
                try await fixture.publish(#"{"id":"resume-\#(index)","tokens":["\#(PipelineFixture.token(3600 + index))"],"payload":{"aps":{"alert":"x"}}}"#)
            }
            #expect(try await Self.credentialProblem(of: worker).contains("environment or topic mismatch?"))
            fixture.sandbox.setRules([])

            // A held job completes at once (its devices go back to the queue as a new job), so the
            // wait is for every device's outcome: accepted by the sandbox, or reported before the trip.
            @Sendable func reportedTokens(_ events: [PipelineFixture.Event]) -> Set<String> {
                Set(events.filter { $0.routingKey == "token.invalid" }.compactMap { $0.string("token") })
            }
            let events = try await fixture.events(timeout: .seconds(60)) { events in
                Set(fixture.sandbox.received().filter { $0.status == 200 }.map(\.token)).union(reportedTokens(events)).count >= jobs
            }
            let reported = reportedTokens(events)
            let received = fixture.sandbox.received()
            let delivered = received.filter { $0.status == 200 }.map(\.token)
            #expect(reported.count < ConfigurationBreaker.minimumMismatches)
            #expect(Set(delivered).count == delivered.count, "sent twice: \(Self.repeated(delivered, in: received))")
            #expect(Set(delivered).union(reported).count == jobs)
            #expect(Set(delivered).isDisjoint(with: reported))
            try await waitUntilHealthy(worker)
        }
    }

    /// Every request to a device accepted more than once (apns-id, status, connection): whether
    /// one round sent it twice (one apns-id) or two attempts did.
    static func repeated(_ delivered: [String], in received: [ReceivedNotification]) -> [String] {
        var counts: [String: Int] = [:]
        for token in delivered { counts[token, default: 0] += 1 }
        return counts.filter { $0.value > 1 }.keys.sorted().map { token in
            let requests = received.filter { $0.token == token }
            let first = requests.first?.receivedAt
            return "\(token.suffix(6)): " + requests.map { request in
                let after = first.map { request.receivedAt - $0 } ?? .zero
                return "\(request.apnsID) \(request.status) c\(request.connectionID) +\(after)"
            }.joined(separator: ", ")
        }
    }

    /// The default app's credential problem, once the worker reports one (observed, up to 60 s).
    static func credentialProblem(of worker: PushWorker) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        while worker.status.snapshot.credentialProblems.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        return try #require(worker.status.snapshot.credentialProblems["default"])
    }

    private func waitUntilHealthy(_ worker: PushWorker) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !worker.status.isHealthy, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(worker.status.isHealthy)
    }

    /// The other side of the breaker: traffic where one device in three has a stale token
    /// (BadDeviceToken from the sandbox; more than the 50 a trip needs in any window of 200, but
    /// less than half) reports each of them and never pauses the app.
    @Test func staleTokensInOrdinaryTrafficAreReportedAndNeverTripTheBreaker() async throws {
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(tokenPrefix: "e", status: 400, reason: "BadDeviceToken")] }) { fixture in
            // APNs' own timeout: on a loaded machine the fixture's 5 s turned slow answers into
            // retries, whose completions ended the wait below before their token.invalid came.
            var configuration = try fixture.workerConfiguration(requestTimeout: .seconds(30))
            configuration.credentialsRetryInterval = .seconds(600)
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let jobs = 300
            var stale = Set<String>()
            for index in 0..<jobs {
                var token = PipelineFixture.token(3300 + index)
                if index % 3 == 0 {
                    token = "e" + token.dropFirst()
                    stale.insert(token)
                }
                try await fixture.publish(#"{"id":"mixed-\#(index)","tokens":["\#(token)"],"payload":{"aps":{"alert":"x"}}}"#)
            }
            // Observed progress: every job completed and every stale token reported.
            let events = try await fixture.events(timeout: .seconds(60)) { events in
                events.filter { $0.routingKey == "job.completed" }.count >= jobs
                    && events.filter { $0.routingKey == "token.invalid" }.count >= stale.count
            }
            let invalid = events.filter { $0.routingKey == "token.invalid" }
            let invalidTokens = Set(invalid.compactMap { $0.string("token") })
            #expect(invalidTokens == stale)
            #expect(invalid.count == stale.count)
            #expect(worker.status.snapshot.credentialProblems.isEmpty)
            #expect(worker.status.snapshot.sent == jobs - stale.count)
            #expect(worker.status.isHealthy)
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 0)
        }
    }

    @Test func eventsWithNoBoundQueueAreKeptInTheUnroutedQueue() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let worker = try #require(fixture.worker)
            // The application's subscriber is gone (a deploy, a typo in a binding).
            try await fixture.control.deleteQueue(fixture.eventQueue)
            try await fixture.publish(#"{"id":"nobody-listens","tokens":["\#(PipelineFixture.token(4000))"],"payload":{"aps":{"alert":"x"}}}"#)
            let unrouted = "\(fixture.resultsExchange).unrouted"
            let deadline = ContinuousClock.now + .seconds(30)
            var kept: AMQPDelivery?
            while kept == nil, ContinuousClock.now < deadline {
                // Until the worker has declared its topology the queue does not exist yet.
                kept = try? await fixture.control.get(queue: unrouted)
                if kept == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let event = try PipelineFixture.Event(try #require(kept))
            #expect(event.routingKey == "job.completed")
            #expect(event.string("job_id") == "nobody-listens")
            // The job is counted once its events are confirmed, which is just after the broker routed them.
            let settled = ContinuousClock.now + .seconds(30)
            while worker.status.snapshot.jobs == 0, ContinuousClock.now < settled { try await Task.sleep(for: .milliseconds(20)) }
            #expect(worker.status.snapshot.jobs == 1)
        }
    }

    @Test func eventsNameTokensAsTheJobAndTheGroupGaveThem() async throws {
        // Foundation's encoder, not ours: the spelling an application stored.
        func base64(_ hex: String) -> String {
            let bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            }
            return Data(bytes).base64EncodedString()
        }
        let upper = PipelineFixture.token(0xa410), inJob = PipelineFixture.token(0xb410)
        let inGroup = PipelineFixture.token(0xc410), failing = PipelineFixture.token(0xd500)
        let rules = [upper, inJob, inGroup].map { SandboxRule(token: $0, status: 410, reason: "Unregistered") }
            + [SandboxRule(token: failing, status: 500, reason: "InternalServerError")]
        try await PipelineFixture.with(sandbox: { $0.rules = rules }) { fixture in
            try await fixture.addToGroup("stored-as-base64", [base64(inGroup)])
            try fixture.startWorker(fixture.workerConfiguration(retryDelays: [.milliseconds(200)]))
            let given = [upper.uppercased(), base64(inJob), base64(failing)]
            try await fixture.publish(#"{"id":"as-given","tokens":["\#(given.joined(separator: "\",\""))"],"groups":["stored-as-base64"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.filter { $0.routingKey == "token.invalid" }.count == 3 && $0.contains { $0.routingKey == "delivery.failed" } }
            let invalid = Set(events.filter { $0.routingKey == "token.invalid" }.compactMap { $0.string("token") })
            #expect(invalid == [upper.uppercased(), base64(inJob), base64(inGroup)])
            // The retry job carried the Base64 spelling through the delay queue.
            let firstFailed = events.first { $0.routingKey == "delivery.failed" }
            let failed = try #require(firstFailed)
            #expect(failed.string("token") == base64(failing))
            #expect(failed.int("attempts") == 2)
            // APNs got lowercase hex every time.
            let sent = Set(fixture.sandbox.received().map(\.token))
            #expect(sent == [upper, inJob, inGroup, failing])
        }
    }

    @Test func aDeletedDelayQueueLosesNothingAndIsDeclaredAgain() async throws {
        let flaky = PipelineFixture.token(4100)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: flaky, status: 503, reason: "ServiceUnavailable", times: 1)] }) { fixture in
            let configuration = try fixture.workerConfiguration(retryDelays: [.milliseconds(300)])
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let delayQueue = try #require(configuration.retry.queueNames.first?.name)
            // Once the worker declared its queues, an operator (or a policy) deletes the delay queue.
            let deadline = ContinuousClock.now + .seconds(30)
            while (try? await fixture.control.messageCount(queue: delayQueue)) == nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await fixture.control.deleteQueue(delayQueue)
            try await fixture.publish(#"{"id":"delay-gone","tokens":["\#(flaky)"],"payload":{"aps":{"alert":"x"}}}"#)

            // The retry copy comes back unroutable (mandatory), the topology is declared again, and
            // the device is delivered on its second attempt: nothing silently dropped.
            let events = try await fixture.events(timeout: .seconds(60)) { $0.filter { $0.routingKey == "job.completed" }.count >= 2 }
            let completedAttempts = events.filter { $0.routingKey == "job.completed" }.map { $0.int("attempt") }
            #expect(completedAttempts == [1, 2])
            let flakyStatuses = fixture.sandbox.received().filter { $0.token == flaky }.map(\.status)
            #expect(flakyStatuses == [503, 200])
            #expect(worker.status.snapshot.resultPublishFailures >= 1, "the returned retry copy counts as a failed publish")
            #expect(try await fixture.control.messageCount(queue: delayQueue) == 0, "the delay queue exists again")
        }
    }
}
