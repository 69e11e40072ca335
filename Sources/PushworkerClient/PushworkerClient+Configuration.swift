extension PushworkerClient {
    /// Where the broker is and what the worker's queue and exchange are called.
    public struct Configuration: Sendable {
        /// `amqp://user:pass@host:port/vhost` or `amqps://…`.
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
        /// AMQP heartbeat in seconds (0: none).
        public var heartbeat: Int

        public init(amqpURL: String = "amqp://guest:guest@127.0.0.1:5672/", caFile: String? = nil, jobQueue: String = "push.jobs",
                    resultsExchange: String = "push.results", connectionName: String = "pushworker-client",
                    declaresJobQueue: Bool = true, heartbeat: Int = 30) {
            self.amqpURL = amqpURL
            self.caFile = caFile
            self.jobQueue = jobQueue
            self.resultsExchange = resultsExchange
            self.connectionName = connectionName
            self.declaresJobQueue = declaresJobQueue
            self.heartbeat = heartbeat
        }
    }
}
