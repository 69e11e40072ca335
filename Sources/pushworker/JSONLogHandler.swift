import Foundation
import Logging
import PushCore

/// `--log-format json`: one JSON object per line on standard error, for log shippers. The keys:
/// `time` (RFC 3339, UTC, milliseconds), `level`, `label`, `message`, `source`, then every metadata
/// key as the text format prints it (`push.app`, `push.job_id`, …), values as strings. Device
/// tokens are shortened above debug by the code that logs them, whatever the format.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// Lines from many threads must not interleave.
    private static let output = NSLock()

    init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var writer = JSONWriter()
        writer.field("time", UnixTime.now().rfc3339)
        writer.field("level", event.level.rawValue)
        writer.field("label", label)
        writer.field("message", event.message.description)
        writer.field("source", event.source)
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) where !Self.reserved.contains(key) {
            writer.field(named: key, "\(value)")
        }
        var line = writer.finish()
        line.append(UInt8(ascii: "\n"))
        Self.output.lock()
        defer { Self.output.unlock() }
        // Unbuffered, like StreamLogHandler's standard error: each line is out before the call returns.
        line.withUnsafeBufferPointer { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// Metadata keys that would repeat the line's own fields.
    private static let reserved: Set<String> = ["time", "level", "label", "message", "source"]
}

/// `--log-format`.
enum LogFormat: String, CaseIterable {
    case text
    case json
}
