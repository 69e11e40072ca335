import AMQP
import PushCore
import PushTransport
import Redis

/// Everything one worker process needs; all of it comes from options or the environment.
public struct WorkerConfiguration: Sendable {
    public var amqp: AMQPConfiguration
    public var redis: RedisConfiguration
    /// App name (the job's `app`) → the app, whatever its platform (a name is one app: the
    /// configuration file says so).
    public var apps: [String: any AppDefinition]
    public var appNames: Set<String> { Set(apps.keys) }
    /// Every platform a job may be written for, whether or not an app of it is served now: a job
    /// carrying another platform's field is told so, and an app of it added by a reload is read
    /// right. The executable gives the platform catalog's; the apps' own platforms are added.
    public var jobPlatforms: [any PlatformJobRules] = []
    /// `jobPlatforms` and the apps' platforms, each once: what the job parser knows.
    var parserPlatforms: [any PlatformJobRules] {
        var platforms = jobPlatforms
        for rules in apps.sorted(by: { $0.key < $1.key }).map(\.value.jobRules)
        where !platforms.contains(where: { $0.platformName == rules.platformName }) {
            platforms.append(rules)
        }
        return platforms
    }
    public var jobQueue = "push.jobs"
    public var deadQueue = "push.jobs.dead"
    /// Classic queues (one node) or quorum queues (replicated over a cluster) for the job, bulk,
    /// delay and dead queues; with quorum queues, retries wait in `delayQueue` (`DelayQueueEntry`).
    public var queueType = QueueType.classic
    /// Retries held for later with quorum queues: `<job queue>.delay`, consumed by the workers
    /// themselves, which hold each message unacked until it is due.
    public var delayQueue: String { jobQueue + ".delay" }
    /// Messages of the delay queue one worker holds at once (its consumer's prefetch): each waits
    /// unacked, its body in memory, until it is due.
    public var delayPrefetch: UInt16 = 500
    /// A quorum lane dead-letters a message delivered more often than this: a backstop only, far
    /// above `maxRedeliveries` (at most `quorumDeliveryLimit - 1`), where the worker rejects the
    /// job with an event first. Fixed, because RabbitMQ refuses to declare a queue again with
    /// another limit.
    public static let quorumDeliveryLimit = 20
    /// RabbitMQ closes a channel whose delivery stayed unacked longer than its `consumer_timeout`
    /// (30 minutes by default): with quorum queues a retry is held unacked for its whole delay,
    /// so no delay may come near it.
    public static let longestHeldDelay: Duration = .seconds(25 * 60)
    public var resultsExchange = "push.results"
    /// Unacked jobs this worker holds at once: where it starts when `tunesPrefetch`, else fixed.
    public var prefetch: UInt16 = 100
    /// Size the prefetch from the jobs as they arrive (`PrefetchTuner`; `--prefetch auto`).
    public var tunesPrefetch = true
    /// Notifications in flight at once, across jobs, apps and platforms: the unit of flow control.
    /// APNs allows about 1,000 streams per connection; 4 connections by default.
    public var maxInFlight = 4000
    /// Fan-outs larger than this are split into chunk jobs of at most this many devices.
    public var chunkSize = 1000
    public var retry = RetryPolicy()
    /// Group `news` of app `default` lives in the Redis set `<prefix>default:news`.
    public var groupKeyPrefix = "group:"
    /// App `scores`' broadcast channels live in the Redis hash `<prefix>scores` (`ChannelRegistry`).
    public var channelKeyPrefix = "pushworker:channels:"
    /// Larger messages are rejected before parsing.
    public var maxMessageBytes = 4 * 1024 * 1024
    /// How long a job for an app this worker does not serve waits in the delay queues before it is
    /// rejected: a fleet's workers reload a new app one after the other (`UnknownAppGrace`). 0
    /// rejects it at once.
    public var unknownAppGrace: Duration = .seconds(300)
    /// Long enough for any rollout; a longer hold would only hide a publisher's typo.
    public static let longestUnknownAppGrace: Duration = .seconds(24 * 3600)
    /// How long to wait before trying an app's credentials again after the platform refused them.
    public var credentialsRetryInterval: Duration = .seconds(60)
    public var shutdownTimeout: Duration = .seconds(30)
    /// A message redelivered more often than this without being settled (each time a worker
    /// crashed or lost its connection holding it) is dead-lettered instead of tried again.
    public var maxRedeliveries = 5
    /// Bodies of unsettled jobs held in memory above this pause consumption until half is free
    /// (prefetch counts messages, not bytes).
    public var maxBytesInFlight = 64 * 1024 * 1024
    /// Which jobs publish `job.completed`.
    public var completionEvents = CompletionEvents.all
    /// The part of `maxInFlight` that bulk rounds (fan-out chunks, jobs marked bulk) may use, in
    /// percent: the rest is always free for transactional jobs.
    public var bulkSharePercent = 80
    /// Bulk jobs held unacked at once. Fixed: they are mostly 1,000-device chunks, for which the
    /// tuner chose 10 before there was a lane; a crash redelivers at most this many.
    public var bulkPrefetch: UInt16 = 10

    /// `<job queue>.bulk`: the bulk lane, where fan-out chunks and jobs marked bulk wait, so that a
    /// broadcast never queues ahead of a transactional job.
    public var bulkQueue: String { jobQueue + ".bulk" }
    /// The bulk lane's delay queues (`<job queue>.bulk.retry.<delay>`): a bulk retry stays bulk.
    public var bulkRetry: RetryPolicy { RetryPolicy(delays: retry.delays, jobQueue: bulkQueue) }

    /// Where a job waits `wait.delay` before it goes back to its lane: the lane's TTL queue of that
    /// delay (`wait.name`) with classic queues, or the delay queue with the due time and the lane
    /// in `properties` (`DelayQueueEntry`) with quorum queues.
    func delayRoute(_ wait: (name: String, delay: Duration), bulk: Bool, properties: inout AMQPProperties, now: UnixTime) -> String {
        guard queueType == .quorum else { return wait.name }
        let due = UnixTime(milliseconds: now.milliseconds + DurationText.milliseconds(wait.delay))
        DelayQueueEntry.mark(&properties, due: due, lane: queue(bulk: bulk))
        return delayQueue
    }

    /// Where a job of this lane waits, and where its retries go.
    public func queue(bulk: Bool) -> String { bulk ? bulkQueue : jobQueue }
    public func retryPolicy(bulk: Bool) -> RetryPolicy { bulk ? bulkRetry : retry }

    /// How often the provider token of a team and key is replaced. Every worker uses the same one,
    /// kept in Redis (`SharedTokenSchedule`). Apple: no more often than every 20 minutes, no less
    /// often than every 60.
    public var providerTokenRefresh: Duration = .seconds(40 * 60)
    /// Lets `providerTokenRefresh` go below 20 minutes: only for tests against the sandbox with a
    /// shorter minimum update interval; real APNs would answer TooManyProviderTokenUpdates.
    public var providerTokenRefreshBelow20Minutes = false
    /// The fleet's token for a team and key is at `<prefix><team id>:<key id>:<key fingerprint>`.
    public var providerTokenKeyPrefix = "pushworker:jwt:"

    public static let providerTokenRefreshRange: ClosedRange<Duration> = .seconds(20 * 60) ... .seconds(50 * 60)
    public static let providerTokenRefreshTestRange: ClosedRange<Duration> = .seconds(1) ... .seconds(50 * 60)

    /// The refresh period in effect: clamped to what is allowed.
    public var effectiveProviderTokenRefresh: Duration {
        let range = providerTokenRefreshBelow20Minutes ? Self.providerTokenRefreshTestRange : Self.providerTokenRefreshRange
        return min(max(providerTokenRefresh, range.lowerBound), range.upperBound)
    }

    public init(amqp: AMQPConfiguration, redis: RedisConfiguration, apps: [String: any AppDefinition]) {
        self.amqp = amqp
        self.redis = redis
        self.apps = apps
    }

    /// Queues and exchanges the worker relies on; declared (idempotently, durable) on every connect.
    public var topology: [AMQPDeclaration] {
        if queueType == .quorum {
            let quorum: [String: AMQPFieldValue] = ["x-queue-type": .string("quorum")]
            // Past the limit the broker moves a message to the dead queue itself (no event).
            let lane = quorum.merging([
                "x-delivery-limit": .int(Int64(Self.quorumDeliveryLimit)),
                "x-dead-letter-exchange": .string(""),
                "x-dead-letter-routing-key": .string(deadQueue),
            ]) { $1 }
            return [
                .queue(name: jobQueue, arguments: lane),
                .queue(name: bulkQueue, arguments: lane),
                .queue(name: delayQueue, arguments: quorum),
                .queue(name: deadQueue, arguments: quorum),
            ] + Self.resultsTopology(resultsExchange: resultsExchange, queueType: .quorum)
        }
        var declarations: [AMQPDeclaration] = [
            .queue(name: jobQueue),
            .queue(name: bulkQueue),
            .queue(name: deadQueue),
        ] + Self.resultsTopology(resultsExchange: resultsExchange, queueType: .classic)
        for (policy, lane) in [(retry, jobQueue), (bulkRetry, bulkQueue)] {
            for (name, delay) in policy.queueNames {
                declarations.append(.queue(name: name, arguments: [
                    "x-message-ttl": .int(DurationText.milliseconds(delay)),
                    // Expired retries go back to their lane's queue through the default exchange.
                    "x-dead-letter-exchange": .string(""),
                    "x-dead-letter-routing-key": .string(lane),
                ]))
            }
        }
        return declarations
    }

    /// The largest body a chunk job of `chunkSize` devices can have: the longest tokens APNs allows
    /// (400 hex characters, quoted, comma), the largest payload (5 KiB for VoIP) and
    /// the other fields. The worker must never publish a job it would reject itself.
    public static func largestChunkJobBytes(chunkSize: Int) -> Int {
        chunkSize * (DeviceToken.maxHexLength + 3) + 5120 + 2048
    }

    public static func largestChunkSize(maxMessageBytes: Int) -> Int {
        max(0, (maxMessageBytes - 5120 - 2048) / (DeviceToken.maxHexLength + 3))
    }

    /// `<results exchange>.unrouted`: an exchange and a queue of that name.
    public var unroutedEventsExchange: String { resultsExchange + ".unrouted" }

    /// The results exchange and, as its alternate exchange, where events nobody is bound to (a
    /// subscriber deploying, a typo in a binding) land instead of vanishing. Declared by the worker
    /// and by `pushworker events` with the same arguments (others would be refused by the broker).
    /// With quorum queues the unrouted queue is one too: a classic one lives on one node, and while
    /// that node is down every declaration of it fails (404) and every event routed to it is
    /// nacked, which would stop the fleet (ops/cluster found it).
    public static func resultsTopology(resultsExchange: String, queueType: QueueType) -> [AMQPDeclaration] {
        let unrouted = resultsExchange + ".unrouted"
        var arguments: [String: AMQPFieldValue] = ["x-max-length": .int(Int64(unroutedEventsLimit))]
        if queueType == .quorum { arguments["x-queue-type"] = .string("quorum") }
        return [
            .exchange(name: unrouted, type: "fanout"),
            .queue(name: unrouted, arguments: arguments),
            .binding(queue: unrouted, exchange: unrouted, routingKey: ""),
            .exchange(name: resultsExchange, type: "topic", arguments: ["alternate-exchange": .string(unrouted)]),
        ]
    }
    /// The oldest unrouted events are dropped beyond this many.
    public static let unroutedEventsLimit = 100_000

    public func groupKey(app: String, group: String) -> String {
        "\(groupKeyPrefix)\(app):\(group)"
    }
}
