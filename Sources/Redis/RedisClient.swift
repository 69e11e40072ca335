import Dispatch
import Logging

/// A Redis client whose hiredis connection lives on one serial queue: commands from any task are
/// handed to that queue, run there (blocking I/O stays off the Swift cooperative pool), and the
/// answer resumes the caller. Which server a command goes to is the router's business: one server
/// (`redis://`), the master the sentinels name, or the cluster node of the key's slot. A broken
/// connection is dropped and reopened; with sentinels or a cluster the command is retried at the
/// right node until `connectTimeout + commandTimeout` (what one connect and one command took at
/// most before), then it throws.
public final class RedisClient: Sendable {
    private let configuration: RedisConfiguration
    private let queue: DispatchQueue
    private let state: RouterBox

    public init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.queue = DispatchQueue(label: "pushworker.redis")
        let router: any CommandRouter
        switch configuration.topology {
        case .standalone:
            router = StandaloneRouter(configuration: configuration, logger: logger)
        case let .sentinel(sentinels, masterName, sentinelPassword):
            router = SentinelRouter(configuration: configuration, sentinels: sentinels, masterName: masterName,
                                    sentinelPassword: sentinelPassword, logger: logger)
        case let .cluster(seeds):
            router = ClusterRouter(configuration: configuration, seeds: seeds, logger: logger)
        }
        self.state = RouterBox(router)
    }

    /// Runs one command. Error replies come back as `.error`, connection failures throw.
    public func command(_ arguments: [String]) async throws(RedisError) -> RedisReply {
        let result: Result<RedisReply, RedisError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: Result { () throws(RedisError) -> RedisReply in try runOnQueue(arguments) })
            }
        }
        return try result.get()
    }

    /// Several commands for one key in one round trip (pipelined); the replies in order. Error
    /// replies come back as `.error`, connection failures throw. All name the same key (or none):
    /// on Redis Cluster they must go to one node.
    public func pipeline(_ commands: [[String]]) async throws(RedisError) -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        let result: Result<[RedisReply], RedisError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: Result { () throws(RedisError) -> [RedisReply] in
                    try state.router.runPipeline(commands, deadline: .now + configuration.connectTimeout + configuration.commandTimeout)
                })
            }
        }
        return try result.get()
    }

    /// SADD of each batch of members, pipelined; returns how many were new in all.
    public func setAdd(key: String, batches: [[String]]) async throws(RedisError) -> Int {
        let replies = try await pipeline(batches.map { ["SADD", key] + $0 })
        var added = 0
        for reply in replies {
            switch reply {
            case let .integer(value): added += Int(value)
            case let .error(text): throw RedisError(.reply, "SADD \(key): \(text)")
            default: throw RedisError(.unexpectedReply, "SADD returned \(reply)")
            }
        }
        return added
    }

    /// One SSCAN step: the next cursor ("0" when done) and the members it returned.
    public func scanSetPage(key: String, cursor: String, count: Int) async throws(RedisError) -> (cursor: String, members: [String]) {
        let reply = try await command(["SSCAN", key, cursor, "COUNT", String(count)])
        if case let .error(text) = reply { throw RedisError(.reply, "SSCAN \(key): \(text)") }
        guard case let .array(parts) = reply, parts.count == 2, let next = parts[0].text, case let .array(items) = parts[1] else {
            throw RedisError(.unexpectedReply, "SSCAN \(key) returned \(reply)")
        }
        return (next, items.compactMap(\.text))
    }

    /// Adds members to a set; returns how many were new.
    public func setAdd(key: String, members: [String]) async throws(RedisError) -> Int {
        try await integerCommand(["SADD", key] + members)
    }

    /// Removes members from a set; returns how many were there.
    public func setRemove(key: String, members: [String]) async throws(RedisError) -> Int {
        try await integerCommand(["SREM", key] + members)
    }

    public func setCardinality(key: String) async throws(RedisError) -> Int {
        try await integerCommand(["SCARD", key])
    }

    public func ping() async throws(RedisError) {
        let reply = try await command(["PING"])
        guard reply.text == "PONG" else { throw RedisError(.unexpectedReply, "PING answered \(reply)") }
    }

    private func integerCommand(_ arguments: [String]) async throws(RedisError) -> Int {
        let reply = try await command(arguments)
        switch reply {
        case let .integer(value): return Int(value)
        case let .error(text): throw RedisError(.reply, "\(arguments[0]) \(arguments.count > 1 ? arguments[1] : ""): \(text)")
        default: throw RedisError(.unexpectedReply, "\(arguments[0]) returned \(reply)")
        }
    }

    /// Called only on `queue`.
    private func runOnQueue(_ arguments: [String]) throws(RedisError) -> RedisReply {
        try state.router.run(arguments, deadline: .now + configuration.connectTimeout + configuration.commandTimeout)
    }
}

/// Holds the router; touched only on the client's serial queue, which is what makes the
/// unchecked Sendable sound.
private final class RouterBox: @unchecked Sendable {
    let router: any CommandRouter
    init(_ router: any CommandRouter) { self.router = router }
}
