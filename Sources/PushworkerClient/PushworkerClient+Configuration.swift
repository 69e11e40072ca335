import AMQP

extension PushworkerClient {
    /// Where the broker is and what the worker's queue and exchange are called.
    public struct Configuration: Sendable {
        /// `amqp://user:pass@host:port/vhost` or `amqps://…`; several nodes of a cluster separated
        /// by commas (`amqp://u:p@h1,h2,h3/`): the client connects to one and fails over.
        public var amqpURL: String
        /// PEM bundle that verifies the broker for `amqps://`; the system store when nil.
        public var caFile: String?
        /// Where jobs are published (the workers' `--job-queue`).
        public var jobQueue: String
        /// Where the workers publish events (their `--results-exchange`).
        public var resultsExchange: String
        /// Shown in RabbitMQ's management UI; event subscriptions add " events".
        public var connectionName: String
        /// Declare `jobQueue` (as the worker does) on connect, so jobs published before any worker
        /// ran are kept. Off: a missing queue makes `send` fail with `.unroutable`.
        public var declaresJobQueue: Bool
        /// The workers' `--queue-type`. With quorum queues the client only checks that `jobQueue`
        /// exists (the workers declare it: RabbitMQ refuses a declaration with other arguments),
        /// so connecting fails until a worker has run once.
        public var queueType: QueueType
        /// AMQP heartbeat in seconds (0: none).
        public var heartbeat: Int

        public init(amqpURL: String = "amqp://guest:guest@127.0.0.1:5672/", caFile: String? = nil, jobQueue: String = "push.jobs",
                    resultsExchange: String = "push.results", connectionName: String = "pushworker-client",
                    declaresJobQueue: Bool = true, queueType: QueueType = .classic, heartbeat: Int = 30) {
            self.amqpURL = amqpURL
            self.caFile = caFile
            self.jobQueue = jobQueue
            self.resultsExchange = resultsExchange
            self.connectionName = connectionName
            self.declaresJobQueue = declaresJobQueue
            self.queueType = queueType
            self.heartbeat = heartbeat
        }
    }
}
