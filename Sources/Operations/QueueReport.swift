import PushCore

/// `pushworker queues`' output: a table for people, or one JSON object for scripts.
public enum QueueReport {
    public static let unackedNote = "Unacked messages (delivered to a worker, not yet settled) are not counted: AMQP 0-9-1 does not report them, and the worker does not need the management plugin. Use `rabbitmqctl list_queues name messages_ready messages_unacknowledged consumers` on the broker's host."

    public static func text(_ rows: [QueueDepth]) -> String {
        let width = max(5, rows.map(\.entry.name.count).max() ?? 0)
        func padded(_ text: String, _ count: Int) -> String { text + String(repeating: " ", count: max(0, count - text.count)) }
        func right(_ text: String, _ count: Int) -> String { String(repeating: " ", count: max(0, count - text.count)) + text }
        var lines = [padded("QUEUE", width) + "  " + padded("ROLE", 10) + right("READY", 9) + right("CONSUMERS", 11)]
        for row in rows {
            let start = padded(row.entry.name, width) + "  " + padded(row.entry.role.rawValue, 10)
            switch row.state {
            case .present(let messages, let consumers):
                lines.append(start + right(String(messages), 9) + right(String(consumers), 11))
            case .missing:
                lines.append(start + "  missing" + (row.entry.optional ? " (declared only in quorum mode)" : " (not declared: no worker with these options has started)"))
            case .unknown(let problem):
                lines.append(start + "  unknown: " + problem)
            }
        }
        lines.append(unackedNote)
        return lines.joined(separator: "\n")
    }

    public static func json(_ rows: [QueueDepth]) -> String {
        let queues = jsonArray(rows) { row, object in
            object.field("name", row.entry.name)
            object.field("role", row.entry.role.rawValue)
            switch row.state {
            case .present(let messages, let consumers):
                object.rawField("exists", "true")
                object.field("ready", messages)
                object.field("consumers", consumers)
            case .missing:
                object.rawField("exists", "false")
            case .unknown(let problem):
                object.rawField("exists", "null")
                object.field("error", problem)
            }
            object.rawField("optional", row.entry.optional ? "true" : "false")
        }
        var document = JSONWriter()
        document.field("queues", rawJSON: queues)
        document.rawField("unacked", "null")
        document.field("unacked_note", unackedNote)
        return String(decoding: document.finish(), as: UTF8.self)
    }
}
