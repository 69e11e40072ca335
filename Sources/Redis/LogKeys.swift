/// Metadata keys of the Redis client's log lines, in one place (dotted, prefixed `redis.`).
enum LogKeys {
    static let error = "redis.error"
    static let host = "redis.host"
    static let master = "redis.master"
    static let slot = "redis.slot"
}
