import AMQP
import APNs
import Foundation
import APNsCore
import PushCore
import Sandbox
import Testing
import Worker

/// End to end against the real RabbitMQ and Redis on 127.0.0.1 and the sandbox over real TLS.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PipelineTests {
    @Test func tokensAndOverlappingGroupsReachEachDeviceOnce() async throws {
        try await PipelineFixture.with { fixture in
            let explicit = (0..<3).map(PipelineFixture.token)
            try await fixture.addToGroup("news", (2..<10).map(PipelineFixture.token))
            try await fixture.addToGroup("beta", (8..<15).map(PipelineFixture.token))
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"job-1","tokens":["\#(explicit.joined(separator: "\",\""))"],"groups":["news","beta","empty"],"payload":{"aps":{"alert":"Hello"}}}"#)

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let completedEvent = events.first(where: { $0.routingKey == "job.completed" })
            let completed = try #require(completedEvent)
            #expect(completed.string("job_id") == "job-1")
            #expect(completed.int("sent") == 15)
            #expect(completed.int("devices") == 15)
            let received = fixture.sandbox.received()
            #expect(received.count == 15)
            #expect(Set(received.map(\.token)) == Set((0..<15).map(PipelineFixture.token)))
            let first = try #require(received.first)
            #expect(first.topic == "com.example.app")
            #expect(first.pushType == "alert")
            #expect(first.priority == 10)
            #expect(String(decoding: first.payload, as: UTF8.self) == #"{"aps":{"alert":"Hello"}}"#)
        }
    }

    @Test func unregisteredTokenBecomesTokenInvalidEventWithTimestamp() async throws {
        let dead = PipelineFixture.token(410)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: dead, status: 410, reason: "Unregistered")] }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"job-410","tokens":["\#(dead)","\#(PipelineFixture.token(1))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let invalidEvent = events.first(where: { $0.routingKey == "token.invalid" })
            let invalid = try #require(invalidEvent)
            #expect(invalid.string("token") == dead)
            #expect(invalid.string("reason") == "Unregistered")
            #expect(invalid.int("status") == 410)
            let timestamp = try #require(invalid.int("timestamp"))
            #expect(abs(timestamp - Int(Date().timeIntervalSince1970 * 1000)) < 60_000)
            #expect(invalid.string("job_id") == "job-410")
            let completedEvent = events.first(where: { $0.routingKey == "job.completed" })
            let completed = try #require(completedEvent)
            #expect(completed.int("sent") == 1)
            #expect(completed.int("invalid") == 1)
        }
    }

    @Test func serviceUnavailableSucceedsOnSecondAttemptThroughDelayQueue() async throws {
        let flaky = PipelineFixture.token(503)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: flaky, status: 503, reason: "ServiceUnavailable", times: 1)] }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"job-503","tokens":["\#(flaky)","\#(PipelineFixture.token(2))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.filter { $0.routingKey == "job.completed" }.count == 2 }
            let completions = events.filter { $0.routingKey == "job.completed" }
            let completionAttempts = completions.map { $0.int("attempt") }
            #expect(completionAttempts == [1, 2])
            #expect(completions[0].int("sent") == 1)
            #expect(completions[0].int("retried") == 1)
            #expect(completions[1].int("sent") == 1)
            #expect(completions[1].int("devices") == 1)
            let anyFailed = events.contains { $0.routingKey == "delivery.failed" }
            #expect(!anyFailed)
            let attempts = fixture.sandbox.received().filter { $0.token == flaky }.map(\.status)
            #expect(attempts == [503, 200])
        }
    }

    @Test func exhaustedRetriesBecomeDeliveryFailed() async throws {
        let broken = PipelineFixture.token(500)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: broken, status: 500, reason: "InternalServerError")] }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration(retryDelays: [.milliseconds(200), .milliseconds(200)]))
            try await fixture.publish(#"{"id":"job-500","tokens":["\#(broken)"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.contains { $0.routingKey == "delivery.failed" } && $0.filter { $0.routingKey == "job.completed" }.count == 3 }
            let failedEvent = events.first(where: { $0.routingKey == "delivery.failed" })
            let failed = try #require(failedEvent)
            #expect(failed.string("token") == broken)
            #expect(failed.int("attempts") == 3)
            #expect(failed.int("status") == 500)
            #expect(failed.string("reason") == "InternalServerError")
            let attempts = fixture.sandbox.received().filter { $0.token == broken }
            #expect(attempts.count == 3)
            // The apns-id of the last attempt, as APNs saw it: what a support request looks up.
            #expect(failed.string("apns_id") == attempts.last?.apnsID)
            #expect(Set(attempts.map(\.apnsID)).count == 3)
        }
    }

    @Test func malformedJobGoesToDeadQueueWithRejectedEvent() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"bad-1","tokens":["zz"],"payload":{"aps":{"alert":"x"}}}"#)
            try await fixture.publish("this is not json", messageID: "bad-2")

            let events = try await fixture.events { $0.filter { $0.routingKey == "job.rejected" }.count == 2 }
            // The two jobs are processed concurrently: their events may come in either order.
            let rejections = events.filter { $0.routingKey == "job.rejected" }
            let badTokenRejection = rejections.first(where: { $0.string("job_id") == "bad-1" })
            let badToken = try #require(badTokenRejection)
            #expect(badToken.string("field") == "tokens[0]", "\(badToken.fields) \(String(describing: badToken.fields["field"]))")
            #expect(badToken.string("error")?.contains("hex") == true)
            let notJSONRejection = rejections.first(where: { $0.string("job_id") == "bad-2" })
            let notJSON = try #require(notJSONRejection)
            #expect(notJSON.string("error")?.contains("not valid JSON") == true)
            let first = try #require(try await fixture.control.get(queue: fixture.deadQueue))
            let second = try #require(try await fixture.control.get(queue: fixture.deadQueue))
            let badTokenCopy = [first, second].first(where: { String(decoding: $0.body, as: UTF8.self).contains("bad-1") })
            let dead = try #require(badTokenCopy)
            #expect(dead.properties.headers["x-pushworker-field"] == .string("tokens[0]"))
            let notJSONCopyKept = [first, second].contains { String(decoding: $0.body, as: UTF8.self) == "this is not json" }
            #expect(notJSONCopyKept)
            #expect(fixture.sandbox.received().isEmpty)
        }
    }

    @Test func certificateAuthentication() async throws {
        try await PipelineFixture.with { fixture in
            let material = fixture.sandbox.material
            try fixture.startWorker(fixture.workerConfiguration(credentials: .certificate(.pkcs12(file: material.clientPKCS12File, password: "sandbox"))))
            try await fixture.publish(#"{"id":"cert-1","tokens":["\#(PipelineFixture.token(7))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let completedSent = events.first(where: { $0.routingKey == "job.completed" })?.int("sent")
            #expect(completedSent == 1)
            let received = try #require(fixture.sandbox.received().first)
            #expect(received.authentication == "certificate:com.example.app")
        }
    }

    @Test func goAwayMidBatchLosesNothing() async throws {
        try await PipelineFixture.with(sandbox: { $0.faults.goAwayEveryRequests = 7 }) { fixture in
            // APNs' own timeout: on a loaded machine (a sanitizer build, suites running beside it) an
            // answer merely slow would otherwise be retried until its attempts ran out.
            try fixture.startWorker(fixture.workerConfiguration(requestTimeout: .seconds(30)))
            let tokens = (0..<300).map(PipelineFixture.token)
            try await fixture.addToGroup("all", tokens)
            try await fixture.publish(#"{"id":"goaway","groups":["all"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" }.reduce(0) { $0 + ($1.int("sent") ?? 0) } == 300
            }
            let anyFailed = events.contains { $0.routingKey == "delivery.failed" }
            #expect(!anyFailed, "\(events.filter { $0.routingKey == "delivery.failed" }.prefix(3).map(\.fields))")
            let accepted = fixture.sandbox.received().filter { $0.status == 200 }
            #expect(Set(accepted.map(\.token)) == Set(tokens))
            #expect(fixture.sandbox.statistics().goAwaysSent > 0)
        }
    }

    @Test func serverAllowingOneConcurrentStream() async throws {
        try await PipelineFixture.with(sandbox: { $0.maxConcurrentStreams = 1 }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let tokens = (0..<50).map(PipelineFixture.token)
            try await fixture.publish(#"{"id":"one-stream","tokens":["\#(tokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let completedSent = events.first(where: { $0.routingKey == "job.completed" })?.int("sent")
            #expect(completedSent == 50)
            #expect(fixture.sandbox.statistics().maxConcurrentStreamsSeen == 1)
        }
    }

    @Test func largeFanOutIsSplitIntoChunks() async throws {
        try await PipelineFixture.with { fixture in
            let tokens = (0..<2500).map(PipelineFixture.token)
            try await fixture.addToGroup("everyone", tokens)
            // A long request timeout: on a loaded machine (or under AddressSanitizer) 2,500 answers can
            // take longer than the fixture's 5 s, and this test is about chunks, not timeouts.
            try fixture.startWorker(fixture.workerConfiguration(chunkSize: 1000, requestTimeout: .seconds(60)))
            try await fixture.publish(#"{"id":"fanout","groups":["everyone"],"payload":{"aps":{"alert":"x"}}}"#)

            // Done when the chunks together sent every device (a slow machine may add retry rounds).
            let events = try await fixture.events(timeout: .seconds(120)) { events in
                let completions = events.filter { $0.routingKey == "job.completed" }
                return completions.contains { $0.int("chunks") == 3 } && completions.reduce(0) { $0 + ($1.int("sent") ?? 0) } == 2500
            }
            let completions = events.filter { $0.routingKey == "job.completed" }
            let parentCompletion = completions.first(where: { $0.int("chunks") == 3 })
            let parent = try #require(parentCompletion)
            #expect(parent.int("devices") == 2500)
            let completedChunks = Set(completions.compactMap { $0.int("chunk") })
            #expect(completedChunks == [0, 1, 2])
            // At-least-once: a request that timed out on a loaded machine may be accepted twice.
            let accepted = fixture.sandbox.received().filter { $0.status == 200 }
            #expect(Set(accepted.map(\.token)) == Set(tokens))
        }
    }

    @Test func refusedCredentialsPauseConsumptionAndKeepTheJobs() async throws {
        try await PipelineFixture.with { fixture in
            let material = fixture.sandbox.material
            // A key ID the sandbox does not know: APNs answers 403 InvalidProviderToken.
            let wrongKey = try APNsTokenProvider(keyFile: material.tokenKeyFile, keyID: "OTHERKEY01", teamID: material.teamID)
            var configuration = try fixture.workerConfiguration(credentials: .token(wrongKey))
            configuration.credentialsRetryInterval = .seconds(120)
            try fixture.startWorker(configuration)
            let tokens = (0..<3).map(PipelineFixture.token)
            try await fixture.publish(#"{"id":"creds","tokens":["\#(tokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let anyFailedInvalidOrRejected = events.contains { ["delivery.failed", "token.invalid", "job.rejected"].contains($0.routingKey) }
            #expect(!anyFailedInvalidOrRejected, "\(events.map(\.fields))")
            let worker = try #require(fixture.worker)
            #expect(worker.status.snapshot.credentialProblems["default"]?.contains("InvalidProviderToken") == true)
            #expect(!worker.status.isHealthy)
            // The devices wait in the job queue, untouched, while the worker does not consume
            // (observed: the requeue reaches the broker when it does, on a loaded machine later).
            let deadline = ContinuousClock.now + .seconds(30)
            while try await fixture.control.messageCount(queue: fixture.jobQueue) == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 1)
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            let waiting = try #require(try await fixture.control.get(queue: fixture.jobQueue))
            let job = try JobParser.apns.parse(waiting.body, messageID: nil, now: 0, makeID: { "x" })
            #expect(Set(job.tokens.map(\.identity)) == Set(tokens))
            #expect(job.attempts == 0)
            let allRefused = fixture.sandbox.received().allSatisfy { $0.status == 403 }
            #expect(allRefused)
        }
    }

    @Test func expiredJobIsReportedNotSent() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let token = PipelineFixture.token(7)
            try await fixture.publish(#"{"id":"stale","tokens":["\#(token)"],"expiration":1,"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let failedEvent = events.first(where: { $0.routingKey == "delivery.failed" })
            let failed = try #require(failedEvent)
            #expect(failed.string("token") == token)
            #expect(failed.string("reason") == "Expired")
            let completedEvent = events.first(where: { $0.routingKey == "job.completed" })
            let completed = try #require(completedEvent)
            #expect(completed.int("failed") == 1)
            #expect(completed.int("sent") == 0)
            #expect(fixture.sandbox.received().isEmpty)
        }
    }

    @Test func expiredProviderTokenHoldsTheDeviceUntilCredentialsWork() async throws {
        let refused = PipelineFixture.token(403)
        let fine = PipelineFixture.token(1)
        try await PipelineFixture.with(sandbox: {
            $0.rules = [SandboxRule(token: refused, status: 403, reason: "ExpiredProviderToken", times: 1)]
        }) { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.credentialsRetryInterval = .seconds(1)
            try fixture.startWorker(configuration)
            try await fixture.publish(#"{"id":"jwt","tokens":["\#(refused)","\#(fine)"],"payload":{"aps":{"alert":"x"}}}"#)

            // A token minted seconds ago may not be replaced (APNs' 20-minute rule): the device is
            // held in the job queue, consumption pauses, and it goes out once consumption resumes.
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" }.compactMap { $0.int("sent") }.reduce(0, +) >= 2
            }
            let anyFailedInvalidOrRejected = events.contains { ["delivery.failed", "token.invalid", "job.rejected"].contains($0.routingKey) }
            #expect(!anyFailedInvalidOrRejected, "\(events.map(\.fields))")
            let completedCount = events.filter { $0.routingKey == "job.completed" }.count
            #expect(completedCount == 2, "\(events.map(\.fields))")
            let accepted = fixture.sandbox.received().filter { $0.status == 200 }.map(\.token)
            #expect(accepted.sorted() == [fine, refused].sorted())
        }
    }

    @Test func completionEventsCanBeLimitedToJobsWithFailures() async throws {
        let dead = PipelineFixture.token(0x7410)
        try await PipelineFixture.with(sandbox: { $0.rules = [SandboxRule(token: dead, status: 410, reason: "Unregistered")] }) { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.completionEvents = .failures
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            try await fixture.publish(#"{"id":"all-sent","tokens":["\#(PipelineFixture.token(0x7001))"],"payload":{"aps":{"alert":"x"}}}"#)
            try await fixture.publish(#"{"id":"one-invalid","tokens":["\#(dead)","\#(PipelineFixture.token(0x7002))"],"payload":{"aps":{"alert":"x"}}}"#)
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            // Both jobs settled (the worker counts them) before looking for what was not published.
            let deadline = ContinuousClock.now + .seconds(20)
            while worker.status.snapshot.jobs < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(worker.status.snapshot.jobs == 2)
            // Settled means acked after the broker confirmed its events: they are all queued by now.
            var all = events
            while let delivery = try await fixture.control.get(queue: fixture.eventQueue) { all.append(try PipelineFixture.Event(delivery)) }
            let completed = all.filter { $0.routingKey == "job.completed" }.map { $0.string("job_id") }
            #expect(completed == ["one-invalid"], "a job whose devices were all sent publishes no job.completed")
            let deadReported = all.contains { $0.routingKey == "token.invalid" && $0.string("token") == dead }
            #expect(deadReported)
            let acceptedCount = fixture.sandbox.received().filter { $0.status == 200 }.count
            #expect(acceptedCount == 2)
        }
    }
}
