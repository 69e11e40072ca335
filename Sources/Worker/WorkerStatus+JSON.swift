import PushCore

extension WorkerStatus {
    /// Healthy means: connected to RabbitMQ, consuming, results confirmed, Redis answering as
    /// expected, and no app's credentials are being refused.
    public var isHealthy: Bool { problem == nil }

    /// Whether this worker can do its work (`/readyz`): what `problem` names, less what belongs to
    /// one app (its credentials refused, its platform unreachable). Those hold back that app's
    /// jobs only, another worker would meet the same refusal, and a push service is anyone's to
    /// run (Web Push); `/status` and the metrics still show them.
    public var readinessProblem: String? {
        let snapshot = self.snapshot
        if !snapshot.amqpConnected { return "not connected to RabbitMQ" }
        if let results = snapshot.resultsProblem { return results }
        if let consumer = snapshot.consumerProblem { return consumer }
        if let redis = snapshot.redisProblem { return "Redis: \(redis)" }
        if let pause = snapshot.workerPauses.first { return "consumption paused: \(pause)" }
        return nil
    }

    /// What makes the worker unhealthy, in words (`/healthz` answers it with 503); nil when healthy.
    public var problem: String? {
        let snapshot = self.snapshot
        if !snapshot.amqpConnected { return "not connected to RabbitMQ" }
        if let (app, reason) = snapshot.credentialProblems.min(by: { $0.key < $1.key }) {
            return "the platform refused the credentials of app \(app): \(reason)"
        }
        if let results = snapshot.resultsProblem { return results }
        if let consumer = snapshot.consumerProblem { return consumer }
        // Jobs that name groups wait in the delay queues meanwhile: a worker that cannot finish them is not healthy.
        if let redis = snapshot.redisProblem { return "Redis: \(redis)" }
        if let pause = snapshot.pauses.first { return "consumption paused: \(pause)" }
        return nil
    }

    /// The status document served on `--status-port` (`GET /status`) and written to `--stats-file`.
    public func json() -> [UInt8] {
        let snapshot = self.snapshot
        let latency = self.latency.summary
        var writer = JSONWriter()
        writer.rawField("healthy", isHealthy ? "true" : "false")
        writer.rawField("ready", readinessProblem == nil ? "true" : "false")
        writer.rawField("amqp_connected", snapshot.amqpConnected ? "true" : "false")
        writer.field("redis_problem", snapshot.redisProblem)
        var problems = JSONWriter()
        for (app, reason) in snapshot.credentialProblems.sorted(by: { $0.key < $1.key }) { problems.field(named: app, reason) }
        writer.field("credential_problems", rawJSON: problems.finish())
        writer.field("results_problem", snapshot.resultsProblem)
        writer.field("result_publish_failures", snapshot.resultPublishFailures)
        writer.field("consumer_problem", snapshot.consumerProblem)
        writer.rawField("consuming", snapshot.pauses.isEmpty && snapshot.consumerProblem == nil ? "true" : "false")
        writer.field("paused_for", strings: snapshot.pauses)
        writer.field("jobs", snapshot.jobs)
        writer.field("rejected", snapshot.rejected)
        writer.field("sent", snapshot.sent)
        writer.field("failed", snapshot.failed)
        writer.field("invalid", snapshot.invalid)
        writer.field("retried", snapshot.retried)
        writer.field("chunks_published", snapshot.chunksPublished)
        writer.field("deferred", snapshot.deferred)
        writer.field("handed_back", snapshot.handedBack)
        writer.field("latency_p50_us", Int(latency.p50Microseconds))
        writer.field("latency_p99_us", Int(latency.p99Microseconds))
        writer.field("latency_max_us", Int(latency.maxMicroseconds))
        writer.field("latency_count", Int(latency.count))
        return writer.finish()
    }
}
