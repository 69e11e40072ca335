import Dispatch
import Logging

/// A Redis client whose hiredis connection lives on one serial queue: commands from any task are
/// handed to that queue, run there (blocking I/O stays off the Swift cooperative pool), and the
/// answer resumes the caller. A broken connection is dropped and reopened on the next command.
public final class RedisClient: Sendable {
    private let configuration: RedisConfiguration
    private let logger: Logger
    private let queue: DispatchQueue
    private let state: ConnectionBox

    public init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.queue = DispatchQueue(label: "pushworker.redis")
        self.state = ConnectionBox()
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
        let connection: RedisConnection
        if let existing = state.connection {
            connection = existing
        } else {
            connection = try RedisConnection(configuration: configuration)
            state.connection = connection
            logger.debug("connected to Redis", metadata: [LogKeys.host: "\(configuration.host):\(configuration.port)"])
        }
        do {
            return try connection.run(arguments)
        } catch {
            // A hiredis context error leaves the context unusable; the next command reconnects.
            state.connection = nil
            logger.warning("Redis connection failed", metadata: [LogKeys.error: "\(error.message)"])
            throw error
        }
    }
}

/// Holds the connection; touched only on the client's serial queue, which is what makes the
/// unchecked Sendable sound.
private final class ConnectionBox: @unchecked Sendable {
    var connection: RedisConnection?
}
