/// SIGHUP's reload: new requests use the new apps, API keys, relay apps and limits; requests in
/// progress finish with the configuration they began with (nothing is closed or dropped).
extension Gateway {
    /// Puts `new` in force and returns the settings it changes that are read at start only (they
    /// keep their first value until a restart), by their name in the file.
    @discardableResult
    public func reload(_ new: GatewaySettings) -> [String] {
        let now = clock.now()
        // Groups stay where the workers (read at their start too) look for them.
        var effective = new
        effective.groupKeyPrefix = settings.groupKeyPrefix
        // Built outside the lock (it hashes every key); SIGHUP's reloads come one at a time.
        let next = GatewayConfiguration(settings: effective, redis: redis, now: now, carrying: configuration)
        current.withLockedValue { $0 = next }
        return startOnlyChanges(in: new)
    }

    private func startOnlyChanges(in new: GatewaySettings) -> [String] {
        let old = settings
        let checks: [(String, Bool)] = [
            ("gateway.listen", old.host != new.host || old.port != new.port),
            ("gateway.pushd_udp", old.pushd != new.pushd),
            ("amqp", old.amqp.url != new.amqp.url || old.amqp.caFile != new.amqp.caFile),
            ("redis", old.redis != new.redis),
            ("worker.job_queue", old.jobQueue != new.jobQueue),
            ("worker.queue_type", old.queueType != new.queueType),
            ("worker.group_key_prefix", old.groupKeyPrefix != new.groupKeyPrefix),
            ("idle timeout", old.idleTimeout != new.idleTimeout),
        ]
        return checks.filter(\.1).map(\.0)
    }
}
