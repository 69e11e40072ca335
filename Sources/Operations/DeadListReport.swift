import PushCore

/// `pushworker dead list`'s output: one block per job for people, a JSON array for scripts.
public enum DeadListReport {
    public static func text(_ letters: [DeadLetter], queue: String, ready: Int) -> String {
        guard !letters.isEmpty else { return "\(queue) is empty" }
        var lines = ["\(queue): \(ready) jobs" + (letters.count < ready ? ", the first \(letters.count):" : ":")]
        for letter in letters {
            var line = "\(letter.id ?? "-")  app \(letter.app ?? "-")"
            if let field = letter.field { line += "  field \(field)" }
            if let truncated = letter.truncatedFrom { line += "  CUT to \(letter.bodySize) of \(truncated) bytes (cannot be replayed)" }
            lines.append(line)
            lines.append("    " + (letter.error ?? "(no x-pushworker-error header: not dead-lettered by pushworker)"))
        }
        return lines.joined(separator: "\n")
    }

    public static func json(_ letters: [DeadLetter]) -> String {
        String(decoding: jsonArray(letters) { letter, object in
            object.field("id", letter.id)
            object.field("app", letter.app)
            object.field("field", letter.field)
            object.field("error", letter.error)
            object.field("rejected_at", letter.rejectedAt)
            object.field("truncated_from", letter.truncatedFrom)
            object.field("bytes", letter.bodySize)
        }, as: UTF8.self)
    }
}
