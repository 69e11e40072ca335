import ArgumentParser
import Operations
import WorkerConfigurationFile

struct QueuesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queues",
        abstract: "Show the ready messages and consumers of the job, bulk, delay and dead queues.",
        discussion: """
            The queues are named as `pushworker run` names them (--job-queue, --retry-delays, or --config): \
            <job queue>, <job queue>.bulk, <job queue>.retry.<delay> and <job queue>.bulk.retry.<delay> for each delay, \
            <job queue>.delay (quorum mode only) and <job queue>.dead. Each is looked at with a passive queue.declare, \
            which creates nothing: a queue that does not exist is shown as missing. \
            Unacked messages (delivered to a worker, not yet settled) are not shown: AMQP 0-9-1 does not report them \
            and the worker does not rely on the management plugin; `rabbitmqctl list_queues name messages_unacknowledged` does.
            """)

    @OptionGroup var target: BrokerTarget
    @Option(help: "Comma-separated retry delays: one delay queue <job queue>.retry.<delay> each. Default: the file's worker.retry_delays, else \(Defaults.retryDelays). [env PUSHWORKER_RETRY_DELAYS]")
    var retryDelays: String?
    @Flag(help: "One JSON object: {\"queues\": [{\"name\", \"role\", \"exists\", \"ready\", \"consumers\", \"optional\"}], \"unacked\": null, …}.")
    var json = false

    func run() async throws {
        let given = try Env.or(retryDelays, "retry-delays").map(WorkerOptions.delays)
        let rows = try await target.withBroker(connectionName: "pushworker-queues") { amqp, jobQueue, settings in
            let delays = given ?? settings.retryDelays ?? Defaults.worker.retry.delays
            return await QueueSurvey.run(QueueRoster(jobQueue: jobQueue, retryDelays: delays), amqp: amqp)
        }
        print(json ? QueueReport.json(rows) : QueueReport.text(rows))
    }
}
