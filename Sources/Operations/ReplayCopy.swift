import AMQP

/// The properties of a dead job's replayed copy: a fresh job again. The dead queue's bookkeeping
/// goes (every `x-pushworker-*` header: the error, the field, deferrals; the broker's `x-death`
/// history, and a quorum queue's `x-delivery-count`, which would count the earlier life's
/// redeliveries against `--max-redeliveries`); the publisher's own properties and headers stay.
/// The body is replayed byte for byte, so `attempts` is what the job says.
public enum ReplayCopy {
    static let brokerHeaders: Set<String> = [
        "x-death", "x-first-death-exchange", "x-first-death-queue", "x-first-death-reason",
        "x-last-death-exchange", "x-last-death-queue", "x-last-death-reason", "x-delivery-count",
    ]

    public static func properties(from dead: AMQPProperties) -> AMQPProperties {
        var properties = dead
        properties.headers = dead.headers.filter { key, _ in !key.hasPrefix("x-pushworker-") && !brokerHeaders.contains(key) }
        properties.persistent = true
        return properties
    }
}
