import Foundation
import Logging
import PushCore
import Sandbox
import Testing
import Worker
import WorkerConfigurationFile
import APNsTokenSharing

/// Several workers against one sandbox, Redis and RabbitMQ: one provider token per team and key
/// for the whole fleet, refreshed once per period by whichever worker gets there first.
@Suite(.serialized, .timeLimit(.minutes(6)))
struct SharedProviderTokenTests {
    static let refresh = Duration.seconds(10)
    /// A little below the refresh period: a connection whose token changed sooner is answered 429.
    static let sandboxMinimumUpdateInterval = Duration.seconds(7)

    /// 4 workers, each with two apps of the same team and key (topics name the worker), run for two
    /// minutes with a 10 s refresh while jobs flow. By the sandbox's record: no request answered
    /// 429 TooManyProviderTokenUpdates, no connection's token changed sooner than a period (less
    /// the iat's whole-second rounding and the retry), every worker that sent while a token was in
    /// use used that token, and the fleet made about one token per period, not four. A worker that
    /// cannot reach Redis within its patience (2 s here) signs a token of its own and says so at
    /// warning: each such token must be one worker's alone and match that worker's log line, and
    /// the fleet's count allows one more per such fallback. (On a starved machine a Redis round
    /// trip can outlast the patience; the line names the reason.)
    @Test func fourWorkersUseOneTokenPerRefreshPeriod() async throws {
        try await PipelineFixture.with(sandbox: { $0.providerTokenMinimumUpdateInterval = Self.sandboxMinimumUpdateInterval }) { fixture in
            let workerCount = 4
            var workers = [PushWorker]()
            let logs = (0..<workerCount).map { _ in RecordingLogHandler.Lines() }
            for index in 0..<workerCount {
                var configuration = try fixture.workerConfiguration(requestTimeout: .seconds(30))
                var appA = try #require(configuration[apns: "default"])
                appA.maxConnections = 1
                // Same team and key, a provider of its own: the worker merges the two.
                var appB = appA
                appB.credentials = try fixture.tokenCredentials()
                appA.topic = "com.example.w\(index).a"
                appB.topic = "com.example.w\(index).b"
                configuration.apps = ["a": appA, "b": appB]
                configuration.providerTokenRefresh = Self.refresh
                configuration.providerTokenRefreshBelow20Minutes = true
                let lines = logs[index], level = fixture.logger.logLevel
                let logger = Logger(label: "w\(index)") { label in
                    var stream = StreamLogHandler.standardError(label: label)
                    stream.logLevel = level
                    return MultiplexLogHandler([RecordingLogHandler(lines: lines, minimum: .warning), stream])
                }
                workers.append(try PushWorker(configuration: configuration, credentialStore: PipelineFixture.providerTokens(configuration, logger: logger),
                                                logger: logger))
            }
            let key = try Self.redisKey(fixture)
            var published = 0
            func publish() async throws {
                // Not alternating: the broker hands jobs round the 4 consumers, and each must get both apps.
                let app = published % 3 == 0 ? "b" : "a"
                let tokens = [PipelineFixture.token(published * 2), PipelineFixture.token(published * 2 + 1)]
                try await fixture.publish(#"{"id":"jwt-\#(published)","app":"\#(app)","tokens":["\#(tokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"t"}}}"#)
                published += 1
            }
            // Jobs waiting when the workers start: every connection opens right after the first token.
            for _ in 0..<40 { try await publish() }
            let tasks = workers.map { worker in Task { try await worker.run() } }
            let started = ContinuousClock.now
            do {
                while ContinuousClock.now - started < .seconds(120) {
                    try await publish()
                    try await Task.sleep(for: .milliseconds(100))
                }
                // Observed progress: every device of every job delivered.
                let deadline = ContinuousClock.now + .seconds(120)
                while Set(fixture.sandbox.received().lazy.filter { $0.status == 200 }.map(\.token)).count < published * 2, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                }
            } catch {
                for worker in workers { worker.stop() }
                for task in tasks { _ = try? await task.value }
                throw error
            }
            for worker in workers { worker.stop() }
            for task in tasks { _ = try? await task.value }
            let elapsed = ContinuousClock.now - started
            _ = try? await fixture.redis.command(["DEL", key])

            let received = fixture.sandbox.received()
            #expect(received.count == published * 2)
            let anyTooManyUpdates = received.contains { $0.reason == "TooManyProviderTokenUpdates" }
            #expect(!anyTooManyUpdates)
            let allAccepted = received.allSatisfy { $0.status == 200 }
            #expect(allAccepted)
            let allWithTeamToken = received.allSatisfy { $0.teamID == fixture.sandbox.material.teamID && $0.providerToken != nil }
            #expect(allWithTeamToken)
            // com.example.w<worker>.<app>: which worker, and which of its apps, sent a request.
            let sender = { (item: ReceivedNotification) in item.topic.split(separator: ".").dropFirst(2).joined(separator: ".") }

            // No connection sees its token change more often than the period.
            let tolerance = Duration.seconds(2)
            for (connection, requests) in Dictionary(grouping: received, by: \.connectionID) {
                let ordered = requests.sorted { $0.receivedAt < $1.receivedAt }
                var changes = [ContinuousClock.Instant]()
                for (previous, next) in zip(ordered, ordered.dropFirst()) where next.providerToken != previous.providerToken {
                    changes.append(next.receivedAt)
                }
                for (previous, next) in zip(changes, changes.dropFirst()) {
                    #expect(next - previous >= Self.refresh - tolerance, "connection \(connection): token changed after \(next - previous)")
                }
            }

            // Every worker, and each of its apps, that sent while a token was in use used it too;
            // except a token a worker signed alone after it could not reach Redis, which it says.
            let fallbackLine = "cannot share the APNs provider token through Redis"
            let fallbacks = logs.map { $0.count(containing: fallbackLine) }
            if fallbacks.contains(where: { $0 > 0 }) { print("shared provider token: fallbacks per worker \(fallbacks)") }
            let byToken = Dictionary(grouping: received) { $0.providerToken ?? "" }
            for uses in byToken.values {
                let first = uses.map(\.receivedAt).min()!, last = uses.map(\.receivedAt).max()!
                let users = Set(uses.map(sender))
                let workersUsing = Set(users.map { $0.split(separator: ".").first.map(String.init) ?? "" })
                if workersUsing.count == 1, let only = workersUsing.first, let index = Int(only.dropFirst()),
                   fallbacks.indices.contains(index), fallbacks[index] > 0 {
                    continue   // that worker's own token, while Redis was out of its reach
                }
                let sendersInWindow = Set(received.filter { $0.receivedAt > first && $0.receivedAt < last }.map(sender))
                #expect(sendersInWindow.isSubset(of: users), "a token used by \(users.sorted()) only, while \(sendersInWindow.sorted()) sent")
            }

            // About one token per period for the fleet, not one per worker.
            let periods = Int(elapsed / Self.refresh)
            print("shared provider token: \(byToken.count) tokens over \(elapsed) (\(periods) periods), \(received.count) notifications, \(Set(received.map(\.connectionID)).count) connections")
            #expect(byToken.count >= periods - 1 && byToken.count <= periods + 2 + fallbacks.reduce(0, +),
                    "\(byToken.count) tokens in \(periods) periods, \(fallbacks) fallbacks")
            #expect(Set(received.map(sender)).count == workerCount * 2, "every worker sent for both its apps")
        }
    }

    /// Where the fixture's workers keep the token of the sandbox's key.
    static func redisKey(_ fixture: PipelineFixture) throws -> String {
        guard case let .token(provider) = try fixture.tokenCredentials() else { throw CancellationError() }
        return APNsProviderTokenStore.key(for: provider, prefix: try fixture.workerConfiguration().providerTokenKeyPrefix)
    }

    /// Redis unreachable: the worker uses a token of its own and delivers anyway.
    @Test func withRedisUnreachableAWorkerUsesItsOwnToken() async throws {
        try await PipelineFixture.with { fixture in
            var configuration = try fixture.workerConfiguration()
            configuration.redis = try .init(url: "redis://127.0.0.1:1/0")
            try fixture.startWorker(configuration)
            try await fixture.publish(#"{"id":"no-redis","tokens":["\#(PipelineFixture.token(1))"],"payload":{"aps":{"alert":"x"}}}"#)
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let completedEvent = events.first { $0.routingKey == "job.completed" }
            let completed = try #require(completedEvent)
            #expect(completed.int("sent") == 1)
            #expect(fixture.sandbox.received().first?.providerToken != nil)
        }
    }

    /// Whoever can write the key must not stop the fleet. Before, a value with `iat` a day ahead
    /// was adopted by every worker (0 of 300 jobs delivered in 60 s); a garbage value left each
    /// worker on a token of its own while it lived. Each is now refused, replaced, and jobs go.
    @Test(arguments: ["future", "forged", "garbage"])
    func anUnusableTokenInRedisIsReplacedAndJobsGo(kind: String) async throws {
        try await PipelineFixture.with { fixture in
            let key = try Self.redisKey(fixture)
            let now = UnixTime.now().seconds
            guard case let .token(provider) = try fixture.tokenCredentials() else { throw CancellationError() }
            let header = Base64.encode(Array(#"{"alg":"ES256","kid":"\#(provider.keyID)"}"#.utf8), urlSafe: true, padded: false)
            let claims = Base64.encode(Array(#"{"iss":"\#(provider.teamID)","iat":\#(now)}"#.utf8), urlSafe: true, padded: false)
            let value = switch kind {
            case "future": "\(now + 86_400).eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.AAAA"
            case "forged": "\(now).\(header).\(claims).\(Base64.encode([UInt8](repeating: 7, count: 64), urlSafe: true, padded: false))"
            default: "not a token at all"
            }
            _ = try await fixture.redis.command(["SET", key, value, "PX", "600000"])
            try fixture.startWorker(try fixture.workerConfiguration())
            try await fixture.publish(#"{"id":"tok-\#(kind)","tokens":["\#(PipelineFixture.token(1))"],"payload":{"aps":{"alert":"x"}}}"#)
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }
            let completedSent = events.first { $0.routingKey == "job.completed" }?.int("sent")
            #expect(completedSent == 1, "\(events.map(\.routingKey))")
            #expect(fixture.sandbox.received().first?.status == 200)
            // The worker's own token replaced the value, for the rest of the fleet to use.
            let stored = try await fixture.redis.command(["GET", key]).text ?? ""
            #expect(stored != value && stored.split(separator: ".").count == 4, "\(stored)")
            let storedTokenUsed = fixture.sandbox.received().first?.providerToken.map { stored.hasSuffix($0) }
            #expect(storedTokenUsed == true)
            _ = try? await fixture.redis.command(["DEL", key])
        }
    }

    /// A reload that renews an app and adds one, both of the same team and key: their new
    /// connections start with the token in use (the sandbox's 20 minutes would refuse any other).
    @Test func aReloadKeepsTheTokenOfItsTeamAndKey() async throws {
        try await PipelineFixture.with { fixture in
            let configuration = try fixture.workerConfiguration()
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            try await fixture.publish(#"{"id":"before","tokens":["\#(PipelineFixture.token(1))"],"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { $0.contains { $0.routingKey == "job.completed" } }

            var renewed = try #require(try fixture.workerConfiguration()[apns: "default"])
            renewed.topic = "com.example.renewed"
            var added = renewed
            added.topic = "com.example.added"
            try await worker.reload(apps: ["default": renewed, "added": added], unchanged: [])
            try await fixture.publish(#"{"id":"renewed","tokens":["\#(PipelineFixture.token(2))"],"payload":{"aps":{"alert":"x"}}}"#)
            try await fixture.publish(#"{"id":"added","app":"added","tokens":["\#(PipelineFixture.token(3))"],"payload":{"aps":{"alert":"x"}}}"#)
            _ = try await fixture.events { $0.filter { $0.routingKey == "job.completed" }.count == 2 }

            let received = fixture.sandbox.received()
            #expect(received.count == 3)
            let allAccepted = received.allSatisfy { $0.status == 200 }
            #expect(allAccepted)
            #expect(Set(received.compactMap(\.providerToken)).count == 1)
            #expect(Set(received.map(\.connectionID)).count == 3, "each client has connections of its own")
            _ = try? await fixture.redis.command(["DEL", try Self.redisKey(fixture)])
        }
    }
}
