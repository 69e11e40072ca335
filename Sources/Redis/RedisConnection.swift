internal import CHiredis
import Glibc

/// Owns one hiredis context. Not thread-safe: `RedisClient` confines it to its serial queue.
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>

    convenience init(configuration: RedisConfiguration) throws(RedisError) {
        try self.init(address: RedisNodeAddress(host: configuration.host, port: configuration.port),
                      username: configuration.username, password: configuration.password, database: configuration.database,
                      connectTimeout: configuration.connectTimeout, commandTimeout: configuration.commandTimeout)
    }

    /// Connects, authenticates and selects the database; each step bounded by the timeouts.
    init(address: RedisNodeAddress, username: String?, password: String?, database: Int,
         connectTimeout: Duration, commandTimeout: Duration) throws(RedisError) {
        let timeout = Self.timeval(connectTimeout)
        guard let context = redisConnectWithTimeout(address.host, Int32(address.port), timeout) else {
            throw RedisError(.connection, "out of memory creating a Redis context")
        }
        if context.pointee.err != 0 {
            let message = Self.errorText(context)
            redisFree(context)
            throw RedisError(.connection, "cannot connect to \(address): \(message)")
        }
        self.context = context
        // The connect timeout covers only the connect; commands get their own bound.
        setTimeout(commandTimeout)
        _ = redisEnableKeepAlive(context)
        if let password {
            var args = ["AUTH"]
            if let username { args.append(username) }
            args.append(password)
            if case let .error(text) = try run(args) {
                throw RedisError(.reply, "authentication failed: \(text)")
            }
        }
        if database != 0, case let .error(text) = try run(["SELECT", String(database)]) {
            throw RedisError(.reply, "SELECT \(database) failed: \(text)")
        }
    }

    /// Bounds each later command's send and receive (a router shortens it to what is left of a
    /// command's overall deadline).
    func setTimeout(_ duration: Duration) {
        _ = redisSetTimeout(context, Self.timeval(max(duration, .milliseconds(1))))
    }

    deinit { redisFree(context) }

    /// Sends one command; arguments are binary-safe (argv form, never formatted).
    func run(_ arguments: [String]) throws(RedisError) -> RedisReply {
        let encoded = arguments.map { Array($0.utf8) }
        return try run(bytes: encoded)
    }

    func run(bytes arguments: [[UInt8]]) throws(RedisError) -> RedisReply {
        // redisCommandArgv copies the arguments before returning, so temporary pointers suffice.
        let raw: UnsafeMutableRawPointer? = withArgv(arguments) { count, pointers, lengths in
            redisCommandArgv(context, count, pointers, lengths)
        }
        guard let raw else {
            throw RedisError(.connection, Self.errorText(context))
        }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        return Self.convert(reply)
    }

    /// Sends every command, then reads every reply, in order: one round trip for the lot instead
    /// of one per command. Any failure leaves the context unusable (the router then drops it), so
    /// a caller never reads a reply that belongs to another command.
    func pipeline(_ commands: [[String]]) throws(RedisError) -> [RedisReply] {
        if commands.count == 1 { return [try run(commands[0])] }
        for command in commands {
            // redisAppendCommandArgv copies the arguments into the output buffer.
            let status = withArgv(command.map { Array($0.utf8) }) { count, pointers, lengths in
                redisAppendCommandArgv(context, count, pointers, lengths)
            }
            guard status == REDIS_OK else { throw RedisError(.connection, Self.errorText(context)) }
        }
        var replies = [RedisReply]()
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
                throw RedisError(.connection, Self.errorText(context))
            }
            defer { freeReplyObject(raw) }
            replies.append(Self.convert(raw.assumingMemoryBound(to: redisReply.self)))
        }
        return replies
    }

    var isBroken: Bool { context.pointee.err != 0 }

    /// The argument count, pointers and lengths hiredis' argv functions take, valid during `body`.
    private func withArgv<Result>(_ arguments: [[UInt8]],
                                  _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int>?) -> Result) -> Result {
        var lengths = arguments.map { $0.count }
        return withPointers(to: arguments) { pointers in
            lengths.withUnsafeMutableBufferPointer { lengthBuffer in
                pointers.withUnsafeMutableBufferPointer { pointerBuffer in
                    body(Int32(arguments.count), pointerBuffer.baseAddress, UnsafePointer(lengthBuffer.baseAddress))
                }
            }
        }
    }

    private func withPointers<Result>(to arguments: [[UInt8]], _ body: (inout [UnsafePointer<CChar>?]) -> Result) -> Result {
        // Flatten into one buffer so a single allocation backs every argument pointer.
        var flat = [CChar]()
        flat.reserveCapacity(arguments.reduce(0) { $0 + $1.count + 1 })
        var offsets = [Int]()
        for argument in arguments {
            offsets.append(flat.count)
            flat.append(contentsOf: argument.map { CChar(bitPattern: $0) })
            flat.append(0)
        }
        return flat.withUnsafeBufferPointer { buffer in
            var pointers: [UnsafePointer<CChar>?] = offsets.map { buffer.baseAddress! + $0 }
            return body(&pointers)
        }
    }

    /// Internal, not private: Fuzz/FuzzRedisReply drives it with replies hiredis parsed from any bytes.
    static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            return .string(bytes(value.str, value.len))
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: bytes(value.str, value.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(value.str, value.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(value.integer))
        case REDIS_REPLY_ARRAY:
            var elements = [RedisReply]()
            elements.reserveCapacity(Int(value.elements))
            for index in 0..<Int(value.elements) {
                if let element = value.element[index] { elements.append(convert(element)) } else { elements.append(.null) }
            }
            return .array(elements)
        default:
            return .null
        }
    }

    private static func bytes(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int) -> [UInt8] {
        guard let pointer, length > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        let text = withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return text.isEmpty ? "connection error \(context.pointee.err)" : text
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
