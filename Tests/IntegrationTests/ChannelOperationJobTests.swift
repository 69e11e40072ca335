import AMQP
import APNs
import BroadcastChannels
import Foundation
import Logging
import PushCore
import Redis
import Sandbox
import Testing
import Worker
import WorkerConfigurationFile

/// Channel-operation jobs through a worker, RabbitMQ, Redis and the sandbox's management API: a
/// create answered with channel.created (the id), a delete with channel.deleted, the registry
/// following, the cap warning from 9,000 channels, and an app without channels refused.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ChannelOperationJobTests {
    @Test func aJobCreatesAndDeletesAChannelAndTheRegistryFollows() async throws {
        try await PipelineFixture.with { fixture in
            let managementPort = try await fixture.sandbox.startChannelManagement()
            var configuration = try fixture.workerConfiguration()
            configuration[apns: "default"]?.broadcastManagementURL = "https://127.0.0.1:\(managementPort)"
            configuration.channelKeyPrefix = "\(fixture.name):channels:"
            let redis = RedisClient(configuration: try RedisConfiguration(url: PipelineFixture.redisURL), logger: fixture.logger)
            let registry = ChannelRegistry(redis: redis, prefix: configuration.channelKeyPrefix)
            // 9,000 channels on record already: the create that makes the 9,001st is warned about.
            let filler = (0..<9_000).map { ["HSET", registry.key(app: "default"), "ZmlsbGVy\(String(format: "%04d", $0))==",
                                            #"{"storage_policy":0,"created":1}"#] }
            for batch in stride(from: 0, to: filler.count, by: 1_000) { _ = try await redis.pipeline(Array(filler[batch..<batch + 1_000])) }
            let lines = RecordingLogHandler.Lines()
            var logger = Logger(label: "it") { _ in RecordingLogHandler(lines: lines, minimum: .warning) }
            logger.logLevel = .warning
            try fixture.startWorker(configuration, logger: logger)

            try await fixture.publish(#"{"id":"op-1","channel_op":"create","storage_policy":1,"label":"Final","ends_at":1767229200}"#)
            let created = try await fixture.events { $0.contains { $0.routingKey == "channel.created" && $0.string("job_id") == "op-1" } }
            let createdEvents = created.filter { $0.routingKey == "channel.created" }
            let event = try #require(createdEvents.first)
            let id = try #require(event.string("channel"))
            #expect(event.int("storage_policy") == 1 && event.string("label") == "Final" && event.int("ends_at") == 1_767_229_200)
            #expect(fixture.sandbox.channels(bundleID: "com.example.app") == [id: 1])
            let record = try await registry.record(id, app: "default")
            #expect(record?.storagePolicy == 1 && record?.label == "Final" && record?.endsAt == 1_767_229_200_000)
            #expect(lines.count(containing: "9001 of Apple's 10000 channels") == 1, "the cap warning from 90%")

            try await fixture.publish(#"{"id":"op-2","channel_op":"delete","channel":"\#(id)"}"#)
            // Deleting it again (a redelivered delete) answers the same: the channel is gone.
            try await fixture.publish(#"{"id":"op-3","channel_op":"delete","channel":"\#(id)"}"#)
            let deleted = try await fixture.events { events in
                events.filter { $0.routingKey == "channel.deleted" && $0.string("channel") == id }.count == 2
            }
            #expect(fixture.sandbox.channels(bundleID: "com.example.app").isEmpty)
            #expect(try await registry.record(id, app: "default") == nil)
            let failures = deleted.filter { $0.routingKey == "channel.failed" || $0.routingKey == "job.rejected" }
            #expect(failures.isEmpty)
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            _ = try await redis.command(["DEL", registry.key(app: "default")])
        }
    }

    @Test func aRefusedOperationIsAnEventAndABrokenOneIsRejected() async throws {
        try await PipelineFixture.with { fixture in
            let managementPort = try await fixture.sandbox.startChannelManagement()
            var configuration = try fixture.workerConfiguration()
            configuration[apns: "default"]?.broadcastManagementURL = "https://127.0.0.1:\(managementPort)"
            configuration.channelKeyPrefix = "\(fixture.name):channels:"
            try fixture.startWorker(configuration)
            // A well-formed id APNs does not know: APNs says so, the worker says channel.deleted (the aim holds).
            try await fixture.publish(#"{"id":"op-4","channel_op":"delete","channel":"bm90LWEtY2hhbm5lbA=="}"#)
            // A create APNs refuses (a policy the sandbox does not take is impossible here: the job
            // parser checks it), so a broken message instead: dead-lettered with job.rejected.
            try await fixture.publish(#"{"id":"op-5","channel_op":"create","storage_policy":3}"#)
            let events = try await fixture.events { events in
                events.contains { $0.string("job_id") == "op-4" } && events.contains { $0.string("job_id") == "op-5" }
            }
            let deletedEvents = events.filter { $0.string("job_id") == "op-4" }
            #expect(deletedEvents.map(\.routingKey) == ["channel.deleted"])
            let rejectedEvents = events.filter { $0.string("job_id") == "op-5" }
            #expect(rejectedEvents.map(\.routingKey) == ["job.rejected"])
            #expect(rejectedEvents.first?.string("field") == "storage_policy")
        }
    }
}
