/// Which hash slot a command goes to on Redis Cluster. Every command the worker and the gateway
/// send names one key, as its first argument, so that is the rule; keyless commands (PING, …) go to
/// any node. Commands with several keys, or whose first argument is not a key, are refused rather
/// than sent to a node that may not hold their other keys: they are not supported on a cluster.
enum ClusterCommandKey {
    /// Commands without a key: any node answers.
    static let keyless: Set<String> = ["PING", "ECHO", "INFO", "ROLE", "TIME", "CLUSTER", "COMMAND", "DBSIZE", "CLIENT", "CONFIG", "HELLO", "AUTH"]
    /// Commands that take several keys (allowed with exactly one key).
    static let multiKey: Set<String> = [
        "DEL", "UNLINK", "EXISTS", "TOUCH", "MGET", "WATCH", "PFCOUNT", "SUNION", "SINTER", "SDIFF", "SINTERCARD",
        "MSET", "MSETNX", "SMOVE", "RENAME", "RENAMENX", "RPOPLPUSH", "LMOVE", "COPY", "PFMERGE",
        "SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE", "ZUNIONSTORE", "ZINTERSTORE", "BLPOP", "BRPOP",
    ]
    /// Commands whose first argument is not a key, or that span the keyspace.
    static let unroutable: Set<String> = ["EVAL", "EVALSHA", "FCALL", "MULTI", "EXEC", "KEYS", "SCAN", "SELECT", "SWAPDB", "FLUSHALL", "FLUSHDB", "XREAD", "MIGRATE"]

    /// The slot, or nil for a keyless command.
    static func slot(of arguments: [String]) throws(RedisError) -> Int? {
        guard let name = arguments.first?.uppercased() else {
            throw RedisError(.unsupported, "an empty command")
        }
        if keyless.contains(name) || arguments.count < 2 { return nil }
        // A script that names exactly one key runs where that key lives: one atomic step on one key.
        if name == "EVAL" || name == "EVALSHA", arguments.count >= 4, arguments[2] == "1" {
            return HashSlot.of(key: arguments[3])
        }
        if unroutable.contains(name) || (multiKey.contains(name) && arguments.count > 2) {
            throw RedisError(.unsupported, "\(name) with several keys (or no key first) is not supported on Redis Cluster: the client routes each command by its one key")
        }
        return HashSlot.of(key: arguments[1])
    }
}
