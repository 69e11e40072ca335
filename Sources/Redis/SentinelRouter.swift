import Logging

/// `redis-sentinel://`: the master of a sentinel-monitored set, found as the sentinel clients
/// spec (Redis docs, "Sentinel client spec") describes: ask the sentinels in order for
/// `SENTINEL get-master-addr-by-name`, connect to the address the first one that knows gives,
/// and check with `ROLE` that it is a master (a sentinel's view may lag a failover). A broken
/// connection, or a `READONLY`/`MASTERDOWN` error reply (the node was demoted, or is a replica cut
/// off), starts the discovery again, and the command is retried until its deadline.
///
/// A command retried after a broken connection may have run once already (its reply was lost):
/// the worker's commands are idempotent (SADD, SREM, SET NX, EXPIRE, DEL) or counters whose
/// double step only costs precision (INCR of a redelivery count).
final class SentinelRouter: CommandRouter {
    private let configuration: RedisConfiguration
    private let sentinels: [RedisNodeAddress]
    private let masterName: String
    private let sentinelPassword: String?
    private let logger: Logger
    private var master: (address: RedisNodeAddress, connection: RedisConnection)?

    init(configuration: RedisConfiguration, sentinels: [RedisNodeAddress], masterName: String, sentinelPassword: String?, logger: Logger) {
        self.configuration = configuration
        self.sentinels = sentinels
        self.masterName = masterName
        self.sentinelPassword = sentinelPassword
        self.logger = logger
    }

    func run(_ arguments: [String], deadline: ContinuousClock.Instant) throws(RedisError) -> RedisReply {
        try runPipeline([arguments], deadline: deadline)[0]
    }

    /// Commands the old master refused (demoted) are sent again to the new one; the others keep
    /// their replies.
    func runPipeline(_ commands: [[String]], deadline: ContinuousClock.Instant) throws(RedisError) -> [RedisReply] {
        var budget = RetryBudget(deadline: deadline)
        var replies = [RedisReply](repeating: .null, count: commands.count)
        var pending = Array(commands.indices)
        while true {
            let problem: RedisError
            do throws(RedisError) {
                let (address, connection) = try masterConnection(&budget)
                connection.setTimeout(budget.bound(configuration.commandTimeout))
                let answers = try connection.pipeline(pending.map { commands[$0] })
                var refused: [Int] = []
                var refusal = ""
                for (index, reply) in zip(pending, answers) {
                    if case let .error(text) = reply, SentinelReplies.meansMasterChanged(text) {
                        refused.append(index)
                        refusal = text
                    } else {
                        replies[index] = reply
                    }
                }
                guard !refused.isEmpty else { return replies }
                pending = refused
                problem = RedisError(.connection, "\(address) no longer takes writes (\(refusal.prefix(60))); asking the sentinels again")
                master = nil
            } catch where error.code == .connection {
                problem = error
                master = nil
            }
            logger.warning("Redis master unreachable", metadata: [LogKeys.error: "\(problem.message)"])
            guard budget.backOff() else { throw problem }
        }
    }

    private func masterConnection(_ budget: inout RetryBudget) throws(RedisError) -> (RedisNodeAddress, RedisConnection) {
        if let master { return master }
        let address = try discover(budget)
        let connection = try RedisConnection(address: address, username: configuration.username, password: configuration.password,
                                             database: configuration.database, connectTimeout: budget.bound(configuration.connectTimeout),
                                             commandTimeout: budget.bound(configuration.commandTimeout))
        let role = try SentinelReplies.role(connection.run(["ROLE"]))
        guard role == "master" else {
            throw RedisError(.connection, "the sentinels named \(address) as the master of \(masterName), but it is a \(role) (failover in progress)")
        }
        master = (address, connection)
        logger.info("connected to the Redis master the sentinels named", metadata: [LogKeys.host: "\(address)", LogKeys.master: "\(masterName)"])
        return (address, connection)
    }

    /// The first sentinel that answers with an address wins. When every sentinel refused us with an
    /// error reply (NOAUTH, WRONGPASS), that is a configuration problem and is thrown as such.
    private func discover(_ budget: RetryBudget) throws(RedisError) -> RedisNodeAddress {
        var problems: [RedisError] = []
        for sentinel in sentinels where !budget.expired {
            do throws(RedisError) {
                let connection = try RedisConnection(address: sentinel, username: nil, password: sentinelPassword, database: 0,
                                                     connectTimeout: budget.bound(configuration.connectTimeout),
                                                     commandTimeout: budget.bound(configuration.commandTimeout))
                let reply = try connection.run(["SENTINEL", "get-master-addr-by-name", masterName])
                if let address = try SentinelReplies.masterAddress(reply, masterName: masterName) { return address }
                problems.append(RedisError(.connection, "sentinel \(sentinel) does not know \(masterName)"))
            } catch {
                problems.append(RedisError(error.code, "sentinel \(sentinel): \(error.message)"))
            }
        }
        let summary = problems.map(\.message).joined(separator: "; ")
        if !problems.isEmpty, problems.allSatisfy({ $0.code == .reply }) { throw RedisError(.reply, summary) }
        throw RedisError(.connection, "no sentinel named a master for \(masterName)" + (summary.isEmpty ? "" : ": \(summary)"))
    }
}
