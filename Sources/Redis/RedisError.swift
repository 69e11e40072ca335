/// A Redis failure a person can act on. Set members never go into the message.
public struct RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public static let invalidURL = Code(name: "invalid URL")
        /// Could not connect, or the connection broke (hiredis context error): retry later.
        public static let connection = Code(name: "connection")
        /// Redis answered with an error reply (WRONGTYPE, NOAUTH, …): the connection is fine.
        public static let reply = Code(name: "error reply")
        public static let unexpectedReply = Code(name: "unexpected reply")
        public static let shutdown = Code(name: "shut down")
        /// A command the topology cannot route (a multi-key command on Redis Cluster): a bug in the caller.
        public static let unsupported = Code(name: "unsupported")
        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Redis \(code): \(message)" }
}
