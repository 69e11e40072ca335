import AMQP
import Foundation
import Logging
import PushCore
import Synchronization
import Testing
@testable import PushworkerClient

/// Against the real RabbitMQ (AMQP_URL, default amqp://guest:guest@127.0.0.1:5672/): a missing
/// broker fails these tests, it never skips them.
@Suite(.serialized) struct ClientBrokerTests {
    static var url: String { ProcessInfo.processInfo.environment["AMQP_URL"] ?? "amqp://guest:guest@127.0.0.1:5672/" }

    static func uniqueName(_ purpose: String) -> String {
        "pushworker-test.client.\(purpose).\(UUID().uuidString.prefix(8).lowercased())"
    }

    static var logger: Logger {
        var logger = Logger(label: "pushworker-client-test")
        logger.logLevel = .critical
        return logger
    }

    static func client(jobQueue: String = "push.jobs", resultsExchange: String = "push.results", declaresJobQueue: Bool = true) -> PushworkerClient {
        PushworkerClient(configuration: .init(amqpURL: url, jobQueue: jobQueue, resultsExchange: resultsExchange,
                                              connectionName: uniqueName("connection"), declaresJobQueue: declaresJobQueue),
                         logger: logger)
    }

    /// A plain AMQP connection to look at what the client did.
    static func inspector() async throws -> AMQPClient {
        let amqp = AMQPClient(configuration: AMQPConfiguration(url: url), topology: [], logger: logger)
        amqp.start()
        try await amqp.waitUntilConnected(timeout: .seconds(10))
        return amqp
    }

    @Test func sendLandsInTheJobQueueWithItsProperties() async throws {
        let queue = Self.uniqueName("jobs")
        let client = Self.client(jobQueue: queue)
        let inspector = try await Self.inspector()
        var job = PushworkerJob.apns(APNsPayload(alert: "Hello"), tokens: [Devices.apnsToken])
        job.collapseID = "c1"
        let id = try await client.send(job)
        #expect(id == job.jobID)
        let delivery = try #require(try await inspector.get(queue: queue))
        #expect(try delivery.body == job.json())
        #expect(delivery.properties.messageID == job.id)
        #expect(delivery.properties.contentType == "application/json")
        #expect(delivery.properties.persistent)
        #expect(delivery.routingKey == queue && delivery.exchange == "")
        #expect(try await inspector.get(queue: queue) == nil)

        // The already-written body goes the same way.
        try await client.publish(jobJSON: Array(#"{"id":"raw-1","tokens":["t"],"payload":{}}"#.utf8), id: "raw-1")
        let raw = try #require(try await inspector.get(queue: queue))
        #expect(raw.properties.messageID == "raw-1" && raw.properties.persistent && raw.properties.contentType == "application/json")
        #expect(raw.body == Array(#"{"id":"raw-1","tokens":["t"],"payload":{}}"#.utf8))

        try await inspector.deleteQueue(queue)
        await client.shutdown()
        await inspector.shutdown()
    }

    @Test func sendToAMissingQueueIsUnroutable() async throws {
        let queue = Self.uniqueName("missing")
        let client = Self.client(jobQueue: queue, declaresJobQueue: false)
        let job = PushworkerJob.apns(APNsPayload(alert: "Hello"), tokens: [Devices.apnsToken])
        await #expect(throws: PushworkerClientError.unroutable(queue: queue)) { try await client.send(job) }
        // And through publish(jobJSON:) with a queue named per call.
        let other = Self.uniqueName("missing-too")
        await #expect(throws: PushworkerClientError.unroutable(queue: other)) {
            try await client.publish(jobJSON: try job.json(), id: job.id, queue: other)
        }
        #expect(client.isConnected)
        await client.shutdown()
        await #expect(throws: PushworkerClientError.shutdown) { try await client.send(job) }
    }

    @Test func anInvalidJobIsNotPublished() async throws {
        let client = Self.client(jobQueue: Self.uniqueName("never"), declaresJobQueue: false)
        await #expect(throws: PushworkerClientError.invalidJob(PushworkerJobError(field: "tokens", "the job names no devices: give at least one device or one group"))) {
            try await client.send(.apns(APNsPayload(alert: "Hi")))
        }
        await client.shutdown()
    }

    @Test func anUnreachableBrokerIsNotConnectedWithinTheTimeout() async throws {
        // Port 9 (discard) on 127.0.0.1: nothing listens there.
        let client = PushworkerClient(configuration: .init(amqpURL: "amqp://guest:guest@127.0.0.1:9/"), logger: Self.logger)
        let error = await #expect(throws: PushworkerClientError.self) {
            try await client.send(.apns(APNsPayload(alert: "Hi"), tokens: [Devices.apnsToken]), timeout: .milliseconds(500))
        }
        if case .notConnected? = error {} else { Issue.record("expected notConnected, got \(String(describing: error))") }
        await client.shutdown()
    }

    @Test func eventsForAJobYieldOnlyThatJobsEvents() async throws {
        let exchange = Self.uniqueName("results")
        let client = Self.client(jobQueue: Self.uniqueName("jobs"), resultsExchange: exchange, declaresJobQueue: false)
        let mine = PushworkerJobID("job-mine")
        let events = try await client.events(for: mine)
        let all = try await client.events(for: nil, pattern: "job.*")
        let inspector = try await Self.inspector()
        let published: [(String, String)] = [
            ("token.invalid", #"{"event":"token.invalid","job_id":"job-other","app":"default","time":"2025-01-01T00:00:00Z","token":"aa","reason":"Unregistered","status":410,"timestamp":null}"#),
            ("token.invalid", #"{"event":"token.invalid","job_id":"job-mine","app":"default","time":"2025-01-01T00:00:00Z","token":"bb","reason":"BadDeviceToken","status":400,"timestamp":null,"message_id":"m-1","apns_id":"m-1"}"#),
            ("delivery.failed", #"{"event":"delivery.failed","job_id":"job-mine","app":"default","time":"2025-01-01T00:00:01Z","token":"cc","status":500,"reason":"InternalServerError","attempts":6}"#),
            ("job.completed", #"{"event":"job.completed","job_id":"job-other","app":"default","time":"2025-01-01T00:00:02Z","chunk":null,"devices":1,"sent":1,"failed":0,"invalid":0,"retried":0,"chunks":0,"attempt":1,"duration_ms":3}"#),
            ("job.completed", #"{"event":"job.completed","job_id":"job-mine","app":"default","time":"2025-01-01T00:00:02Z","chunk":null,"devices":3,"sent":1,"failed":1,"invalid":1,"retried":0,"chunks":0,"attempt":1,"duration_ms":4}"#),
        ]
        for (key, body) in published {
            try await inspector.publish(exchange: exchange, routingKey: key, body: Array(body.utf8), properties: AMQPProperties(contentType: "application/json"))
        }

        var received = [PushworkerEvent]()
        for await event in events {
            received.append(event)
            if event.endsJob { break }
        }
        #expect(received.map(\.routingKey) == ["token.invalid", "delivery.failed", "job.completed"])
        #expect(received.allSatisfy { $0.jobID == mine })
        #expect(received[0].token == "bb" && received[0].reason == "BadDeviceToken" && received[0].status == 400 && received[0].messageID == "m-1")
        #expect(received[1].token == "cc" && received[1].attempts == 6 && received[1].status == 500)
        let completed = received[2]
        #expect(completed.devices == 3 && completed.sent == 1 && completed.failed == 1 && completed.invalid == 1 && completed.retried == 0 && completed.chunks == 0)
        #expect(completed.app == "default" && completed.time == "2025-01-01T00:00:02Z")
        let publishedJSON = try JSONValue.parse(Array(published[4].1.utf8))
        #expect(completed.text == published[4].1 && completed.json == publishedJSON)

        // Without a job id, everything the pattern binds: both jobs' job.completed, nothing else.
        var bound = [PushworkerEvent]()
        for await event in all {
            bound.append(event)
            if bound.count == 2 { break }
        }
        #expect(bound.map(\.routingKey) == ["job.completed", "job.completed"])
        #expect(bound.compactMap(\.jobID) == [PushworkerJobID("job-other"), mine])

        // Cancelling deletes the private queue.
        let queue = events.queue
        await events.cancel()
        await all.cancel()
        do {
            _ = try await inspector.messageCount(queue: queue)
            Issue.record("the private queue \(queue) is still there")
        } catch {
            #expect(error.code == .channelClosed && error.status == 404)
        }
        try await inspector.deleteExchange(exchange)
        try await inspector.deleteExchange(exchange + ".unrouted")
        try await inspector.deleteQueue(exchange + ".unrouted")
        await client.shutdown()
        await inspector.shutdown()
    }

    @Test func aJobRejectedEndsTheJobAndNamesTheField() async throws {
        let exchange = Self.uniqueName("results")
        let client = Self.client(jobQueue: Self.uniqueName("jobs"), resultsExchange: exchange, declaresJobQueue: false)
        let events = try await client.events(for: PushworkerJobID("bad"))
        let inspector = try await Self.inspector()
        let body = #"{"event":"job.rejected","job_id":"bad","app":null,"time":"2025-01-01T00:00:00Z","error":"must be a string","field":"tokens[0]"}"#
        try await inspector.publish(exchange: exchange, routingKey: "job.rejected", body: Array(body.utf8), properties: AMQPProperties())
        var iterator = events.makeAsyncIterator()
        let next = await iterator.next()
        let event = try #require(next)
        #expect(event.endsJob && event.error == "must be a string" && event.field == "tokens[0]" && event.app == nil)
        // After cancel the sequence ends.
        await events.cancel()
        let afterCancel = await iterator.next()
        #expect(afterCancel == nil)
        try await inspector.deleteExchange(exchange)
        try await inspector.deleteExchange(exchange + ".unrouted")
        try await inspector.deleteQueue(exchange + ".unrouted")
        await client.shutdown()
        await inspector.shutdown()
    }

    /// `pushworker send --wait` and `events --seconds` cancel from a timer task that is itself
    /// cancelled right after: the private queue must still go.
    @Test func cancellingFromACancelledTaskStillDeletesTheQueue() async throws {
        let exchange = Self.uniqueName("results")
        let client = Self.client(jobQueue: Self.uniqueName("jobs"), resultsExchange: exchange, declaresJobQueue: false)
        let inspector = try await Self.inspector()
        let events = try await client.events(for: nil)
        let queue = events.queue
        #expect(try await inspector.messageCount(queue: queue) == 0)
        let timer = Task {
            try? await Task.sleep(for: .seconds(60))
            await events.cancel()
        }
        timer.cancel()
        await timer.value
        do {
            _ = try await inspector.messageCount(queue: queue)
            Issue.record("the private queue \(queue) is still there")
        } catch {
            #expect(error.code == .channelClosed && error.status == 404)
        }
        try await inspector.deleteExchange(exchange)
        try await inspector.deleteExchange(exchange + ".unrouted")
        try await inspector.deleteQueue(exchange + ".unrouted")
        await client.shutdown()
        await inspector.shutdown()
    }

    @Test func unroutedEventsAreReadAndRemoved() async throws {
        let exchange = Self.uniqueName("results")
        let client = Self.client(jobQueue: Self.uniqueName("jobs"), resultsExchange: exchange, declaresJobQueue: false)
        let inspector = try await Self.inspector()
        // Nothing bound: the event goes to the alternate exchange.
        try await inspector.declare(ResultsTopology.declarations(resultsExchange: exchange, queueType: .classic))
        let body = #"{"event":"group.missing","job_id":"j","app":"default","time":"2025-01-01T00:00:00Z","group":"news","key":"group:default:news"}"#
        try await inspector.publish(exchange: exchange, routingKey: "group.missing", body: Array(body.utf8), properties: AMQPProperties())
        let unrouted = try await client.unroutedEvents()
        var iterator = unrouted.makeAsyncIterator()
        let next = await iterator.next()
        let event = try #require(next)
        #expect(event.routingKey == "group.missing" && event.text == body)
        await unrouted.cancel()
        #expect(try await inspector.messageCount(queue: exchange + ".unrouted") == 0)
        try await inspector.deleteExchange(exchange)
        try await inspector.deleteExchange(exchange + ".unrouted")
        try await inspector.deleteQueue(exchange + ".unrouted")
        await client.shutdown()
        await inspector.shutdown()
    }
}

/// The wait for a confirm ends at the timeout even when the broker never answers.
@Suite struct ConfirmedPublishTests {
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    @Test func noAnswerEndsAtTheTimeout() async {
        // Never started: a publish waits in its inbox, unanswered, until the shutdown below.
        let amqp = AMQPClient(configuration: AMQPConfiguration(url: "amqp://127.0.0.1/"), topology: [], logger: ClientBrokerTests.logger)
        let started = ContinuousClock.now
        // Beside it, one whose timeout is an hour: only the shutdown can end that one. So the short
        // one ending while the long one still waits shows it ended by its timeout, whatever the
        // machine's load (a wall-clock bound read 22 s for 300 ms under AddressSanitizer in CI).
        let longEnded = Flag()
        let long = Task {
            _ = await ConfirmedPublish.publish(amqp, routingKey: "q", body: [], properties: AMQPProperties(), timeout: .seconds(3600))
            longEnded.set()
        }
        let result = await ConfirmedPublish.publish(amqp, routingKey: "q", body: [], properties: AMQPProperties(), timeout: .milliseconds(300))
        let waited = ContinuousClock.now - started
        #expect(result == nil)
        #expect(waited >= .milliseconds(300), "not before the timeout")
        #expect(!longEnded.isSet, "the hour-long publish still waits: the short one ended by its own timeout")
        await amqp.shutdown()
        await long.value
        #expect(longEnded.isSet, "the shutdown ends the long one")
    }

}
