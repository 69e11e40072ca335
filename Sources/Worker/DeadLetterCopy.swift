import AMQP
import PushCore

/// The copy of a rejected job that goes to the dead queue. Its properties are rebuilt rather than
/// copied: a publisher's property that is not valid (bad UTF-8 comes back longer than the 255
/// bytes a short string may hold), huge headers, or a long error text would make the copy
/// impossible to publish, and a job that cannot be dead-lettered must never loop.
enum DeadLetterCopy {
    /// Error texts and field names are cut to this in headers (the event carries them too).
    static let maxErrorBytes = 1024
    static let maxFieldBytes = 255
    /// The publisher's own headers are kept up to about this many encoded bytes; the content
    /// header frame must fit in one frame (128 KiB by default).
    static let maxKeptHeaderBytes = 16 * 1024
    /// How much of the body a `job.rejected` event quotes when the copy could not keep it whole.
    static let excerptBytes = 256

    static func properties(of delivery: AMQPDelivery, rejection: JobRejection, now: UnixTime) -> AMQPProperties {
        let original = delivery.properties
        var properties = AMQPProperties()
        var dropped: [String] = []
        func keep(_ value: String?, _ name: String) -> String? {
            guard let value else { return nil }
            guard isShortString(value) else {
                dropped.append(name)
                return nil
            }
            return value
        }
        properties.contentType = keep(original.contentType, "content_type")
        properties.messageID = keep(original.messageID, "message_id")
        properties.correlationID = keep(original.correlationID, "correlation_id")
        properties.type = keep(original.type, "type")
        properties.appID = keep(original.appID, "app_id")
        properties.timestamp = original.timestamp
        // The publisher's per-message TTL was for the job queue: kept, it would silently drop the
        // dead-lettered copy (and its reason) from the dead queue.
        properties.expiration = nil
        properties.persistent = true

        var budget = maxKeptHeaderBytes
        var droppedHeaders = 0
        for (key, value) in original.headers.sorted(by: { $0.key < $1.key }) where !key.hasPrefix("x-pushworker-") {
            let size = key.utf8.count + encodedSize(value)
            guard isShortString(key), isValid(value), size <= budget else {
                droppedHeaders += 1
                continue
            }
            budget -= size
            properties.headers[key] = value
        }
        properties.headers["x-pushworker-error"] = .string(truncated(rejection.description, toBytes: maxErrorBytes))
        if let field = rejection.field { properties.headers["x-pushworker-field"] = .string(truncated(field, toBytes: maxFieldBytes)) }
        properties.headers["x-pushworker-rejected-at"] = .string(now.rfc3339)
        if !dropped.isEmpty { properties.headers["x-pushworker-dropped-properties"] = .string(dropped.joined(separator: ",")) }
        if droppedHeaders > 0 { properties.headers["x-pushworker-dropped-headers"] = .int(Int64(droppedHeaders)) }
        if let discarded = delivery.discardedBodySize {
            properties.headers["x-pushworker-truncated-from"] = .int(Int64(clamping: discarded))
        }
        return properties
    }

    /// The least a copy can carry; used when even the rebuilt properties could not be encoded.
    static func minimalProperties(rejection: JobRejection, now: UnixTime) -> AMQPProperties {
        var properties = AMQPProperties()
        properties.persistent = true
        properties.headers["x-pushworker-error"] = .string(truncated(rejection.description, toBytes: maxErrorBytes))
        properties.headers["x-pushworker-rejected-at"] = .string(now.rfc3339)
        return properties
    }

    /// The start of a body as text (invalid UTF-8 shows as U+FFFD), marked when cut.
    static func excerpt(of body: [UInt8], limit: Int = excerptBytes) -> String {
        String(decoding: body.prefix(limit), as: UTF8.self) + (body.count > limit ? "…" : "")
    }

    static func truncated(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        // Cut on a scalar boundary at or before the limit, leaving room for the ellipsis (3 bytes).
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: limit - 3)
        while end > text.startIndex, end.samePosition(in: text.unicodeScalars) == nil { end = text.utf8.index(before: end) }
        return String(text.unicodeScalars[..<end]) + "…"
    }

    /// A property that survives re-encoding: at most 255 bytes and no replacement character
    /// (which is what invalid UTF-8 decoded to).
    private static func isShortString(_ value: String) -> Bool {
        value.utf8.count <= 255 && !value.unicodeScalars.contains("\u{FFFD}")
    }

    private static func isValid(_ value: AMQPFieldValue) -> Bool {
        switch value {
        case .string(let text): !text.unicodeScalars.contains("\u{FFFD}")
        case .array(let items): items.allSatisfy(isValid)
        case .table(let table): table.allSatisfy { isShortString($0.key) && isValid($0.value) }
        case .int, .bool, .double, .bytes, .timestamp, .void: true
        }
    }

    /// Roughly what AMQP encodes (a type octet and a length or the fixed width).
    private static func encodedSize(_ value: AMQPFieldValue) -> Int {
        switch value {
        case .string(let text): 5 + text.utf8.count
        case .bytes(let bytes): 5 + bytes.count
        case .array(let items): 5 + items.reduce(0) { $0 + encodedSize($1) }
        case .table(let table): 5 + table.reduce(0) { $0 + 1 + $1.key.utf8.count + encodedSize($1.value) }
        case .int, .double, .timestamp: 9
        case .bool, .void: 2
        }
    }
}
