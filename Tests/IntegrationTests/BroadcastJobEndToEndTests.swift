import AMQP
import APNs
import BroadcastChannels
import Foundation
import PushCore
import Redis
import Sandbox
import Testing
import Worker
import WorkerConfigurationFile

/// Broadcast jobs through a worker, RabbitMQ, Redis and the sandbox: one request per job on the
/// channel, its expiration from the channel's storage policy, broadcast events (never a token's),
/// and a broadcast refused for the app (FeatureNotEnabled) holding that app alone.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BroadcastJobEndToEndTests {
    static let update = #""live_activity":{"event":"update","timestamp":1700000000,"content_state":{"score":"1-0"}}"#

    /// The fixture's app with the sandbox's management listener, a channel made on it with
    /// `policy`, and its record in the registry.
    static func channel(_ fixture: PipelineFixture, policy: APNsChannelStoragePolicy, app: String = "default",
                        configuration: WorkerConfiguration) async throws -> (id: String, manager: APNsChannelManager, registry: ChannelRegistry) {
        let managementPort = try await fixture.sandbox.startChannelManagement()
        // A provider of its own, as `pushworker channels` has: the worker's follows the fleet's
        // token in Redis, and one connection seeing its token change within 20 minutes is refused
        // (429 TooManyProviderTokenUpdates), by APNs as by the sandbox.
        var apns = try #require(try fixture.workerConfiguration()[apns: "default"])
        apns.topic = try #require(configuration[apns: app]).topic
        apns.broadcastManagementURL = "https://127.0.0.1:\(managementPort)"
        let manager = try APNsChannelManager(configuration: apns, logger: fixture.logger)
        let id = try await manager.create(storagePolicy: policy)
        let redis = RedisClient(configuration: try RedisConfiguration(url: PipelineFixture.redisURL), logger: fixture.logger)
        let registry = ChannelRegistry(redis: redis, prefix: configuration.channelKeyPrefix)
        try await registry.save(ChannelRecord(id: id, storagePolicy: policy.rawValue, createdAt: UnixTime.now().milliseconds), app: app)
        return (id, manager, registry)
    }

    @Test func aBroadcastIsOneRequestThenFailsWithoutATokenEventOnceItsChannelIsDeleted() async throws {
        try await PipelineFixture.with { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.channelKeyPrefix = "\(fixture.name):channels:"
            let (id, manager, registry) = try await Self.channel(fixture, policy: .noStorage, configuration: configuration)
            try fixture.startWorker(configuration)

            // The job asks for an hour; the channel stores nothing, so APNs must get 0.
            try await fixture.publish(#"{"id":"b1","channel":"\#(id)","expiration":"+3600",\#(Self.update)}"#)
            let first = try await fixture.events { $0.contains { $0.routingKey == "job.completed" && $0.string("job_id") == "b1" } }
            let broadcasts = fixture.sandbox.received().filter { $0.channelID != nil }
            #expect(broadcasts.count == 1, "one request for the whole channel")
            let request = try #require(broadcasts.first)
            #expect(request.channelID == id && request.status == 200 && request.pushType == "liveactivity")
            #expect(request.expiration == 0, "a channel with storage policy 0 takes apns-expiration 0")
            #expect(String(decoding: request.payload, as: UTF8.self) == #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}"#)
            let sentEvent = first.first { $0.routingKey == "broadcast.sent" }
            let sent = try #require(sentEvent)
            #expect(sent.string("channel") == id && sent.string("job_id") == "b1")
            #expect(sent.string("apns_request_id") != nil)
            let noted = try await registry.record(id, app: "default")
            #expect(noted?.lastBroadcastAt != nil, "the registry notes the last broadcast")

            // Deleted at APNs: the next broadcast fails with the channel named, no device blamed.
            try await manager.delete(id)
            try await fixture.publish(#"{"id":"b2","channel":"\#(id)",\#(Self.update)}"#)
            let second = try await fixture.events { $0.contains { $0.routingKey == "job.completed" && $0.string("job_id") == "b2" } }
            let failedEvent = second.first { $0.routingKey == "broadcast.failed" }
            let failed = try #require(failedEvent)
            #expect(failed.string("reason") == "ChannelNotRegistered" && failed.string("channel") == id && failed.string("job_id") == "b2")
            let tokenEvents = second.filter { $0.routingKey == "token.invalid" }
            #expect(tokenEvents.isEmpty)
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            await manager.shutdown()
        }
    }

    @Test func featureNotEnabledHoldsThatAppAloneAndNothingIsDeadLettered() async throws {
        try await PipelineFixture.with { fixture in
            var configuration = try fixture.workerConfiguration(retryDelays: [.milliseconds(300), .milliseconds(300)])
            let template = try #require(configuration[apns: "default"])
            var other = template
            other.topic = "com.example.other"
            configuration.apps["other"] = other
            configuration.channelKeyPrefix = "\(fixture.name):channels:"
            configuration.credentialsRetryInterval = .milliseconds(500)
            let (id, manager, _) = try await Self.channel(fixture, policy: .mostRecentMessage, configuration: configuration)
            var refused = SandboxRule(reason: .featureNotEnabled)
            refused.channel = id
            fixture.sandbox.setRules([refused])
            try fixture.startWorker(configuration)

            try await fixture.publish(#"{"id":"live","channel":"\#(id)",\#(Self.update)}"#)
            // Refused once: the app is held, and its broadcast waits while the rule stands.
            try await waitUntil("APNs refused the broadcast") {
                fixture.sandbox.received().contains { $0.channelID == id && $0.reason == "FeatureNotEnabled" }
            }
            // Another app's jobs go on meanwhile.
            for index in 0..<20 {
                try await fixture.publish(#"{"id":"o\#(index)","app":"other","tokens":["\#(PipelineFixture.token(9_100 + index))"],"payload":{"aps":{"alert":"o"}}}"#)
            }
            _ = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" && $0.string("app") == "other" }.count >= 20
            }
            let acceptedWhileHeld = fixture.sandbox.received().filter { $0.channelID == id && $0.status == 200 }
            #expect(acceptedWhileHeld.isEmpty)
            // The App ID gets the capability: the held broadcast goes out, once.
            fixture.sandbox.setRules([])
            let events = try await fixture.events { events in events.contains { $0.routingKey == "broadcast.sent" } }
            let failures = events.filter { $0.routingKey == "broadcast.failed" || $0.routingKey == "token.invalid" }
            #expect(failures.isEmpty, "a held broadcast is neither failed nor blamed on a token")
            let accepted = fixture.sandbox.received().filter { $0.channelID == id && $0.status == 200 }
            #expect(accepted.count == 1)
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            await manager.shutdown()
        }
    }
}
