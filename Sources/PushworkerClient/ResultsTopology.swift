import AMQP

/// The results exchange as the worker declares it. A declaration with other arguments is refused
/// by the broker (406), so this must stay equal to the Worker module's
/// `WorkerConfiguration.resultsTopology(resultsExchange:queueType:)`: the tests compare the two. Copied,
/// not imported, because applications must not link the worker.
enum ResultsTopology {
    /// `WorkerConfiguration.unroutedEventsLimit`.
    static let unroutedEventsLimit: Int64 = 100_000

    static func declarations(resultsExchange: String, queueType: QueueType) -> [AMQPDeclaration] {
        let unrouted = unroutedQueue(resultsExchange: resultsExchange)
        var arguments: [String: AMQPFieldValue] = ["x-max-length": .int(unroutedEventsLimit)]
        if queueType == .quorum { arguments["x-queue-type"] = .string("quorum") }
        return [
            .exchange(name: unrouted, type: "fanout"),
            .queue(name: unrouted, arguments: arguments),
            .binding(queue: unrouted, exchange: unrouted, routingKey: ""),
            .exchange(name: resultsExchange, type: "topic", arguments: ["alternate-exchange": .string(unrouted)]),
        ]
    }

    /// Where events published while no queue was bound wait: an exchange and a queue of this name.
    static func unroutedQueue(resultsExchange: String) -> String {
        resultsExchange + ".unrouted"
    }

    /// The job queue as the worker declares classic queues (durable, no arguments), so that a job
    /// published before any worker ran is kept; a quorum queue is only checked for, since its
    /// arguments are the workers' to choose.
    static func jobQueue(_ name: String, type: QueueType) -> AMQPDeclaration {
        switch type {
        case .classic: .queue(name: name)
        case .quorum: .existingQueue(name: name)
        }
    }
}
