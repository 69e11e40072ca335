import Logging

/// `redis-cluster://`: each command goes to the master serving its key's hash slot (Redis
/// cluster specification, "Redirection and resharding"). The slot map comes from `CLUSTER SLOTS`
/// of any reachable node (those of the map first, then the URL's), one connection is kept per node.
/// `MOVED` updates the map for that slot, retries there and has the whole map read again before
/// the next command; `ASK` sends `ASKING` and the command to the named node once, leaving the map
/// as it is; `TRYAGAIN` (a multi-key operation during a migration) and `CLUSTERDOWN` are retried
/// after a wait. A broken connection drops that node's connection and re-reads the map. All of it
/// within the command's deadline, after which `.connection` is thrown.
final class ClusterRouter: CommandRouter {
    /// More redirects than this for one command means the nodes disagree: give up until the next try.
    static let maxRedirects = 8

    private let configuration: RedisConfiguration
    private let seeds: [RedisNodeAddress]
    private let logger: Logger
    private var table: ClusterSlotTable?
    private var refreshDue = true
    /// Set by MOVED: the retry goes where the MOVED said, the map is read again before the next
    /// command (a node asked at once may not know of the move yet and undo it).
    private var refreshBeforeNextCommand = false
    private var connections: [RedisNodeAddress: RedisConnection] = [:]

    init(configuration: RedisConfiguration, seeds: [RedisNodeAddress], logger: Logger) {
        self.configuration = configuration
        self.seeds = seeds
        self.logger = logger
    }

    func run(_ arguments: [String], deadline: ContinuousClock.Instant) throws(RedisError) -> RedisReply {
        try runPipeline([arguments], deadline: deadline)[0]
    }

    /// Every command of a pipeline names the same slot (one key), so one node answers them all;
    /// those answered with a redirect, `TRYAGAIN` or `CLUSTERDOWN` are sent again, the others keep
    /// their replies.
    func runPipeline(_ commands: [[String]], deadline: ContinuousClock.Instant) throws(RedisError) -> [RedisReply] {
        let slot = try Self.sharedSlot(of: commands)
        if refreshBeforeNextCommand {
            refreshDue = true
            refreshBeforeNextCommand = false
        }
        var budget = RetryBudget(deadline: deadline)
        var redirects = 0
        var asking: RedisNodeAddress?
        var replies = [RedisReply](repeating: .null, count: commands.count)
        var pending = Array(commands.indices)
        while true {
            let problem: RedisError
            var node: RedisNodeAddress?
            do throws(RedisError) {
                let table = try currentTable(&budget)
                let target: RedisNodeAddress
                if let asking {
                    target = asking
                } else if let slot {
                    guard let owner = table.node(forSlot: slot) else {
                        refreshDue = true
                        throw RedisError(.connection, "no node serves slot \(slot) (the cluster is incomplete)")
                    }
                    target = owner
                } else {
                    guard let any = table.nodes.first else { throw RedisError(.connection, "the slot map names no node") }
                    target = any
                }
                node = target
                let connection = try connection(to: target, &budget)
                let afterAsk = asking != nil
                asking = nil
                let answers = try send(pending.map { commands[$0] }, on: connection, asking: afterAsk, target: target)
                var again: [Int] = []
                var redirect: ClusterRedirect?
                var busy: String?
                for (index, reply) in zip(pending, answers) {
                    guard case let .error(text) = reply else {
                        replies[index] = reply
                        continue
                    }
                    if let moved = ClusterRedirect(errorText: text) {
                        redirect = redirect ?? moved
                        again.append(index)
                    } else if text.hasPrefix("TRYAGAIN") || text.hasPrefix("CLUSTERDOWN") {
                        busy = busy ?? text
                        again.append(index)
                    } else {
                        replies[index] = reply
                    }
                }
                if again.isEmpty { return replies }
                pending = again
                if let redirect {
                    let to = redirect.target(answeredBy: target)
                    redirects += 1
                    guard redirects <= Self.maxRedirects else {
                        throw RedisError(.connection, "more than \(Self.maxRedirects) redirects for slot \(redirect.slot); the nodes disagree")
                    }
                    switch redirect.kind {
                    case .moved:
                        self.table?.assign(redirect.slot...redirect.slot, to: to)
                        refreshBeforeNextCommand = true
                        logger.info("Redis Cluster slot moved; following MOVED and re-reading the slot map",
                                    metadata: [LogKeys.slot: "\(redirect.slot)", LogKeys.host: "\(to)"])
                    case .ask:
                        asking = to
                        logger.debug("Redis Cluster slot migrating; following ASK", metadata: [LogKeys.slot: "\(redirect.slot)", LogKeys.host: "\(to)"])
                    }
                    continue
                }
                let text = busy ?? ""
                if text.hasPrefix("CLUSTERDOWN") { refreshDue = true }
                problem = RedisError(.connection, "\(target): \(text.prefix(80))")
            } catch where error.code == .connection {
                if let node { connections[node] = nil }
                refreshDue = true
                problem = error
            }
            logger.warning("Redis Cluster node unavailable", metadata: [LogKeys.error: "\(problem.message)"])
            guard budget.backOff() else { throw problem }
        }
    }

    /// The commands' one slot (nil when keyless); commands for different slots are refused, as a
    /// multi-key command is.
    private static func sharedSlot(of commands: [[String]]) throws(RedisError) -> Int? {
        guard let first = commands.first else { throw RedisError(.unsupported, "an empty pipeline") }
        let slot = try ClusterCommandKey.slot(of: first)
        for command in commands.dropFirst() {
            guard try ClusterCommandKey.slot(of: command) == slot else {
                throw RedisError(.unsupported, "a pipeline whose commands name keys of different slots is not supported on Redis Cluster")
            }
        }
        return slot
    }

    /// The commands in one round trip; after an `ASK` each is preceded by `ASKING` (it admits only
    /// the next command).
    private func send(_ commands: [[String]], on connection: RedisConnection, asking: Bool,
                      target: RedisNodeAddress) throws(RedisError) -> [RedisReply] {
        guard asking else { return try connection.pipeline(commands) }
        let answers = try connection.pipeline(commands.flatMap { [["ASKING"], $0] })
        var replies: [RedisReply] = []
        for pair in stride(from: 0, to: answers.count, by: 2) {
            if case let .error(text) = answers[pair] { throw RedisError(.reply, "ASKING at \(target): \(text)") }
            replies.append(answers[pair + 1])
        }
        return replies
    }

    private func connection(to node: RedisNodeAddress, _ budget: inout RetryBudget) throws(RedisError) -> RedisConnection {
        if let open = connections[node] {
            open.setTimeout(budget.bound(configuration.commandTimeout))
            return open
        }
        let connection = try RedisConnection(address: node, username: configuration.username, password: configuration.password,
                                             database: 0, connectTimeout: budget.bound(configuration.connectTimeout),
                                             commandTimeout: budget.bound(configuration.commandTimeout))
        connections[node] = connection
        return connection
    }

    /// The map, read again first when a MOVED, a broken connection or CLUSTERDOWN asked for it.
    private func currentTable(_ budget: inout RetryBudget) throws(RedisError) -> ClusterSlotTable {
        if let table, !refreshDue { return table }
        var candidates = table?.nodes ?? []
        for seed in seeds where !candidates.contains(seed) { candidates.append(seed) }
        var problems: [String] = []
        for node in candidates where !budget.expired {
            do throws(RedisError) {
                let reply = try connection(to: node, &budget).run(["CLUSTER", "SLOTS"])
                if case let .error(text) = reply {
                    throw RedisError(.reply, "CLUSTER SLOTS at \(node): \(text)")
                }
                let fresh = try ClusterSlotTable(slotsReply: reply, answeredBy: node)
                guard fresh.coveredSlots > 0 else {
                    problems.append("\(node) serves no slot yet")
                    continue
                }
                table = fresh
                refreshDue = false
                // Nodes that left the map keep no connection.
                for address in connections.keys where !fresh.nodes.contains(address) { connections[address] = nil }
                return fresh
            } catch where error.code == .connection {
                connections[node] = nil
                problems.append(error.message)
            }
        }
        if let table { return table }        // a stale map beats none: a MOVED will correct it
        throw RedisError(.connection, "no Redis Cluster node answered CLUSTER SLOTS: \(problems.joined(separator: "; "))")
    }
}
