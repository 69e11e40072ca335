import AMQP
import Foundation
import PushCore
import Sandbox
import Testing
import NIOConcurrencyHelpers
@testable import Worker

/// What a settlement that cannot be published, a hostile message or a missing group may do: never
/// send a device twice, never loop, never hold a huge body in memory (issue "never a storm").
@Suite(.serialized, .timeLimit(.minutes(3)))
struct NoStormTests {
    /// Polls `condition` (observed progress, not a guess at timing) until it holds or `timeout` passes.

    @Test func aSubscribersFullQueueNeverMakesADeviceReceiveTwice() async throws {
        try await PipelineFixture.with { fixture in
            // An application's queue that must not fall behind: full, so the broker nacks every event.
            let full = "\(fixture.name).full"
            try await fixture.control.declare([
                .queue(name: full, durable: false, arguments: ["x-max-length": .int(1), "x-overflow": .string("reject-publish"), "x-expires": .int(120_000)]),
                .binding(queue: full, exchange: fixture.resultsExchange, routingKey: "#"),
            ])
            try await fixture.control.publish(exchange: "", routingKey: full, body: Array("filler".utf8), properties: AMQPProperties())
            try fixture.startWorker(fixture.workerConfiguration())
            let worker = try #require(fixture.worker)
            let tokens = (0..<3).map { PipelineFixture.token(1700 + $0) }
            for (index, token) in tokens.enumerated() {
                try await fixture.publish(#"{"id":"storm-\#(index)","tokens":["\#(token)"],"payload":{"aps":{"alert":"x"}}}"#)
            }
            // A device answered and its results refused twice (a resend would have happened by then). How many
            // of the other jobs were taken before consumption paused depends on timing; either way none is sent twice.
            try await waitUntil("a device was sent and the results failed twice") {
                !fixture.sandbox.received().isEmpty && worker.status.snapshot.resultPublishFailures >= 2
            }
            let receivedWhileFull = fixture.sandbox.received().map(\.token)
            #expect(Set(receivedWhileFull).count == receivedWhileFull.count)
            let snapshot = worker.status.snapshot
            #expect(snapshot.resultsProblem?.contains(fixture.resultsExchange) == true)
            #expect(snapshot.pauses.contains("results cannot be published"))
            #expect(!worker.status.isHealthy)

            // The subscriber catches up: the results go out and the jobs settle, still without a resend.
            try await fixture.control.deleteQueue(full)
            // Distinct jobs: each refused try also reached this fixture's own queue (reject-publish refuses
            // only for the full queue), so storm-0's job.completed can be here several times already.
            let events = try await fixture.events(timeout: .seconds(60)) {
                Set($0.filter { $0.routingKey == "job.completed" }.compactMap { $0.string("job_id") }).count >= tokens.count
            }
            let completedJobIDs = Set(events.filter { $0.routingKey == "job.completed" }.compactMap { $0.string("job_id") })
            #expect(completedJobIDs == ["storm-0", "storm-1", "storm-2"])
            #expect(fixture.sandbox.received().map(\.token).sorted() == tokens.sorted())
            try await waitUntil("the worker is healthy again") { worker.status.isHealthy }
            #expect(worker.status.snapshot.pauses.isEmpty)
        }
    }

    @Test func aDeletedResultsExchangeIsDeclaredAgainWithoutResending() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let worker = try #require(fixture.worker)
            try await fixture.publish(#"{"id":"before","tokens":["\#(PipelineFixture.token(1800))"],"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { $0.contains { $0.string("job_id") == "before" } }
            try await fixture.control.deleteExchange(fixture.resultsExchange)
            try await fixture.publish(#"{"id":"after","tokens":["\#(PipelineFixture.token(1801))"],"payload":{"aps":{"alert":"x"}}}"#)
            try await waitUntil("the results exchange exists again") {
                (try? await fixture.control.declare([.binding(queue: fixture.eventQueue, exchange: fixture.resultsExchange, routingKey: "#")])) != nil
            }
            try await waitUntil("the job is settled") { worker.status.snapshot.jobs >= 2 }
            #expect(worker.status.snapshot.resultPublishFailures >= 1)
            #expect(fixture.sandbox.received().count == 2)
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 0)
        }
    }

    /// The broker cancels the consumer when the job queue is deleted: the worker is unready until a
    /// consumer is confirmed again (never a silent stall behind a green /healthz), declares the queue
    /// again and takes the jobs published after.
    @Test func aDeletedJobQueueIsDeclaredAgainAndConsumed() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let worker = try #require(fixture.worker)
            try await fixture.publish(#"{"id":"before","tokens":["\#(PipelineFixture.token(1850))"],"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { $0.contains { $0.string("job_id") == "before" && $0.routingKey == "job.completed" } }
            #expect(worker.status.isHealthy)

            try await fixture.control.deleteQueue(fixture.jobQueue)
            // The test declares the queue again itself (publish does), so "after" completes only if the
            // worker consumes again; and the worker is healthy only once a new consume-ok came.
            try await fixture.publish(#"{"id":"after","tokens":["\#(PipelineFixture.token(1851))"],"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { $0.contains { $0.string("job_id") == "after" && $0.routingKey == "job.completed" } }
            try await waitUntil("the worker is healthy again") { worker.status.isHealthy }
            #expect(worker.status.snapshot.consumerProblem == nil)
            #expect(fixture.sandbox.received().map(\.token) == [PipelineFixture.token(1850), PipelineFixture.token(1851)])
        }
    }

    @Test func aPoisonJobIsDeadLetteredOnceAndNeverLoops() async throws {
        try await PipelineFixture.with { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            let key = String(repeating: "k", count: 70_000)
            var properties = AMQPProperties()
            properties.contentType = "application/json"
            properties.headers["note"] = .string(String(repeating: "n", count: 100_000))
            properties.headers[String(repeating: "h", count: 250)] = "long key"
            try await fixture.control.declare([.queue(name: fixture.jobQueue)])
            try await fixture.control.publish(exchange: "", routingKey: fixture.jobQueue,
                                              body: Array(#"{"id":"poison","tokens":["\#(PipelineFixture.token(1900))"],"\#(key)":1,"payload":{"aps":{}}}"#.utf8),
                                              properties: properties)
            try await fixture.publish(#"{"id":"good","tokens":["\#(PipelineFixture.token(1901))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events { $0.contains { $0.string("job_id") == "good" && $0.routingKey == "job.completed" } }
            try await waitUntil("the poison job left the job queue") {
                try await fixture.control.messageCount(queue: fixture.deadQueue) >= 1
            }
            let rejected = events.filter { $0.routingKey == "job.rejected" }
            #expect(rejected.count == 1)
            #expect((rejected.first?.string("error")?.utf8.count ?? .max) <= 1024)
            let dead = try #require(try await fixture.control.get(queue: fixture.deadQueue))
            #expect(String(decoding: dead.body, as: UTF8.self).contains("\"poison\""))
            #expect(dead.properties.headers["note"] == nil)
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 0)
            #expect(fixture.sandbox.received().map(\.token) == [PipelineFixture.token(1901)])
        }
    }

    @Test func anOversizedMessageIsRejectedWithoutReadingItWhole() async throws {
        try await PipelineFixture.with { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.maxMessageBytes = 64 * 1024
            try fixture.startWorker(configuration)
            let size = 3 * 1024 * 1024
            let prefix = Array(#"{"id":"huge","tokens":[],"x-pad":""#.utf8)
            let body = prefix + [UInt8](repeating: UInt8(ascii: "a"), count: size - prefix.count - 2) + Array(#""}"#.utf8)
            try await fixture.control.declare([.queue(name: fixture.jobQueue)])
            try await fixture.control.publish(exchange: "", routingKey: fixture.jobQueue, body: body, properties: AMQPProperties())

            let events = try await fixture.events { $0.contains { $0.routingKey == "job.rejected" } }
            let rejectedEvent = events.first { $0.routingKey == "job.rejected" }
            let rejected = try #require(rejectedEvent)
            #expect(rejected.string("error")?.contains("\(size) bytes") == true)
            #expect(rejected.string("excerpt")?.hasPrefix(#"{"id":"huge""#) == true)
            try await waitUntil("the copy is in the dead queue") { try await fixture.control.messageCount(queue: fixture.deadQueue) == 1 }
            let dead = try #require(try await fixture.control.get(queue: fixture.deadQueue))
            #expect(dead.body.count == 64 * 1024)
            #expect(dead.properties.headers["x-pushworker-truncated-from"] == .int(Int64(size)))
            #expect(try await fixture.control.messageCount(queue: fixture.jobQueue) == 0)
        }
    }

    @Test func missingGroupsAreReported() async throws {
        try await PipelineFixture.with { fixture in
            try await fixture.addToGroup("real", [PipelineFixture.token(2000)])
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"groups","groups":["real","gone"],"payload":{"aps":{"alert":"x"}}}"#)
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } && $0.contains { $0.routingKey == "group.missing" } }
            let missingEvent = events.first { $0.routingKey == "group.missing" }
            let missing = try #require(missingEvent)
            #expect(missing.string("group") == "gone")
            #expect(missing.string("key") == "\(fixture.groupPrefix)default:gone")
            let completedEvent = events.first { $0.routingKey == "job.completed" }
            let completed = try #require(completedEvent)
            #expect(completed.fields["groups_missing"] == .array([.string("gone")]))
            #expect(completed.int("sent") == 1)
        }
    }
}

extension NoStormTests {
    /// WRONGTYPE is a configuration error: the worker pauses and the job waits in a delay queue,
    /// round after round, without ever being counted as a crash redelivery (a requeue would be, and
    /// after --max-redeliveries the job was dead-lettered). Once the key is right, it is delivered once.
    @Test func aRedisConfigurationErrorPausesWithoutDeadLetteringTheJob() async throws {
        try await PipelineFixture.with { fixture in
            let key = "\(fixture.groupPrefix)default:typo"
            _ = try await fixture.redis.command(["SET", key, "not a set"])
            var configuration = try fixture.workerConfiguration()
            configuration.credentialsRetryInterval = .milliseconds(200)
            configuration.maxRedeliveries = 1
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            try await fixture.publish(#"{"id":"wrongtype","groups":["typo"],"payload":{"aps":{"alert":"x"}}}"#)
            // More rounds than --max-redeliveries allows crash redeliveries.
            try await waitUntil("the job waited in the delay queues three times") { worker.status.snapshot.deferred >= 3 }
            #expect(worker.status.snapshot.redisProblem?.contains("WRONGTYPE") == true)
            #expect(worker.status.snapshot.rejected == 0)
            #expect(fixture.sandbox.received().isEmpty)

            // One atomic step (RENAME over the string): after a DEL and before a SADD, a retry would
            // find no group and complete the job with nothing sent.
            _ = try await fixture.redis.setAdd(key: "\(key).fixed", members: [PipelineFixture.token(2050)])
            _ = try await fixture.redis.command(["RENAME", "\(key).fixed", key])
            let events = try await fixture.events(timeout: .seconds(30)) { $0.contains { $0.string("job_id") == "wrongtype" && $0.routingKey == "job.completed" } }
            let anyRejected = events.contains { $0.routingKey == "job.rejected" }
            #expect(!anyRejected)
            #expect(fixture.sandbox.received().map(\.token) == [PipelineFixture.token(2050)])
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
        }
    }

    @Test func aMessageThatKeepsComingBackUnsettledIsDeadLettered() async throws {
        try await PipelineFixture.with { fixture in
            let body = #"{"id":"crasher","tokens":["\#(PipelineFixture.token(2100))"],"payload":{"aps":{"alert":"x"}}}"#
            try await fixture.publish(body, messageID: "crasher")
            // Five earlier workers died holding it (as their INCRs would have counted)...
            let key = RedeliveryCounter.key(jobQueue: fixture.jobQueue, messageID: "crasher", bodySize: body.utf8.count, body: Array(body.utf8))
            _ = try await fixture.redis.command(["SET", key, "5", "EX", "60"])
            // ...and the broker redelivers it once more: taken and dropped unacked by a client that goes away.
            let holder = AMQPClient(configuration: AMQPConfiguration(url: PipelineFixture.amqpURL), topology: [], logger: fixture.logger)
            holder.start()
            let taken = NIOLockedValueBox(false)
            holder.consume(queue: fixture.jobQueue, prefetch: 1) { _ in taken.withLockedValue { $0 = true } }
            try await waitUntil("the holder took the job") { taken.withLockedValue { $0 } }
            await holder.shutdown()

            try fixture.startWorker(fixture.workerConfiguration())
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.rejected" } }
            let rejectedEvent = events.first { $0.routingKey == "job.rejected" }
            let rejected = try #require(rejectedEvent)
            #expect(rejected.string("error")?.contains("redelivered 6 times") == true)
            #expect(rejected.string("job_id") == "crasher")
            try await waitUntil("the copy is in the dead queue") { try await fixture.control.messageCount(queue: fixture.deadQueue) == 1 }
            #expect(fixture.sandbox.received().isEmpty)
        }
    }
}
