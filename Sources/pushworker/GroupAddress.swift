import ArgumentParser
import Logging
import Redis

/// Which group a `groups` command is about: the Redis set `<prefix><app>:<group>`, on the Redis
/// that `--redis-url` names (a server, Sentinel or Cluster: the client routes by the key).
struct GroupAddress: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Redis key prefix of group sets. [env PUSHWORKER_GROUP_KEY_PREFIX]")
    var groupKeyPrefix: String = Env["group-key-prefix"] ?? "group:"
    @Argument(help: "The app (the job's \"app\").") var app: String
    @Argument(help: "The group name.") var group: String

    var key: String { "\(groupKeyPrefix)\(app):\(group)" }

    func client() throws -> RedisClient {
        RedisClient(configuration: try connection.redisConfiguration(), logger: Logger(label: "pushworker.groups"))
    }
}
