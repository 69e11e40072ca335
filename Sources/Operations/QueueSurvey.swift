import AMQP

/// Looks at every queue of a roster with passive declares: a missing queue is a row, not an
/// error that ends the survey (a 404 closes only the admin channel, which the next request opens
/// again).
public enum QueueSurvey {
    public static func run(_ roster: QueueRoster, amqp: AMQPClient) async -> [QueueDepth] {
        var rows: [QueueDepth] = []
        for entry in roster.entries {
            let state: QueueDepth.State
            do {
                let messages = try await amqp.messageCount(queue: entry.name)
                let consumers = try await amqp.consumerCount(queue: entry.name)
                state = .present(messages: messages, consumers: consumers)
            } catch where error.status == 404 {
                state = .missing
            } catch {
                state = .unknown("\(error)")
            }
            rows.append(QueueDepth(entry: entry, state: state))
        }
        return rows
    }
}
