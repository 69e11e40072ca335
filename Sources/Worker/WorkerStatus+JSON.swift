import PushCore

extension WorkerStatus {
    /// Healthy means: connected to RabbitMQ, and no app's credentials are being refused.
    public var isHealthy: Bool {
        let snapshot = self.snapshot
        return snapshot.amqpConnected && snapshot.credentialProblems.isEmpty
    }

    /// The status document served on `--status-port` (`GET /status`) and written to `--stats-file`.
    public func json() -> [UInt8] {
        let snapshot = self.snapshot
        let latency = self.latency.summary
        var writer = JSONWriter()
        writer.rawField("healthy", isHealthy ? "true" : "false")
        writer.rawField("amqp_connected", snapshot.amqpConnected ? "true" : "false")
        writer.field("redis_problem", snapshot.redisProblem)
        var problems = JSONWriter()
        for (app, reason) in snapshot.credentialProblems.sorted(by: { $0.key < $1.key }) { problems.field(app, reason) }
        writer.field("credential_problems", rawJSON: problems.finish())
        writer.rawField("consuming", snapshot.credentialProblems.isEmpty ? "true" : "false")
        writer.field("jobs", snapshot.jobs)
        writer.field("rejected", snapshot.rejected)
        writer.field("sent", snapshot.sent)
        writer.field("failed", snapshot.failed)
        writer.field("invalid", snapshot.invalid)
        writer.field("retried", snapshot.retried)
        writer.field("chunks_published", snapshot.chunksPublished)
        writer.field("latency_p50_us", Int(latency.p50Microseconds))
        writer.field("latency_p99_us", Int(latency.p99Microseconds))
        writer.field("latency_max_us", Int(latency.maxMicroseconds))
        writer.field("latency_count", Int(latency.count))
        return writer.finish()
    }
}
