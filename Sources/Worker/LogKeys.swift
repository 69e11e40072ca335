/// Metadata keys of the worker's log lines, in one place (dotted, prefixed by what they describe).
enum LogKeys {
    static let error = "push.error"
    static let problem = "push.problem"
    static let app = "push.app"
    static let jobID = "push.job.id"
    static let group = "push.group"
    static let devices = "push.devices"
    static let pause = "push.pause"
    static let attempt = "push.publish.attempt"
    static let retryIn = "push.retry_in"
    static let unconfirmed = "push.publish.unconfirmed"
    static let destination = "amqp.destination"
    static let messageID = "amqp.message_id"
    static let queue = "amqp.queue"
    static let prefetch = "amqp.prefetch"
    /// What the platform answered (a reason code or its own words).
    static let reason = "push.reason"
    static let redisKey = "redis.key"
    static let unknownAppGrace = "push.unknown_app.grace"
}
