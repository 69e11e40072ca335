import Logging
import PushCore

/// A job's log context, attached only when something is logged: setting metadata on a swift-log
/// `Logger` makes the stream handler re-render its metadata, too costly to do for every job
/// (measured: docs/evidence/code-measurements.md#job-logger).
struct JobLog: Sendable {
    let base: Logger
    let jobID: String
    let app: String
    let chunk: Int?

    init(_ base: Logger, job: PushJob) {
        self.base = base
        jobID = job.id
        app = job.app
        chunk = job.chunk
    }

    var logger: Logger {
        var logger = base
        logger[metadataKey: "push.job.id"] = "\(jobID)"
        logger[metadataKey: "push.app"] = "\(app)"
        if let chunk { logger[metadataKey: "push.job.chunk"] = "\(chunk)" }
        return logger
    }

}
