/// An AMQP failure a caller can act on: an opaque code, the rabbitmq-c status when there was one,
/// and a message (never credentials).
public struct AMQPError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The connection dropped (socket error, heartbeat timeout, server close) before the operation finished.
        public static let connectionLost = Code("connectionLost")
        /// A TCP/TLS connect or the AMQP handshake failed.
        public static let connectFailed = Code("connectFailed")
        /// The broker refused the credentials or the vhost.
        public static let authenticationFailed = Code("authenticationFailed")
        /// The broker closed a channel (e.g. 404 NOT_FOUND, 406 PRECONDITION_FAILED).
        public static let channelClosed = Code("channelClosed")
        /// The broker answered a confirmed publish with basic.nack.
        public static let nacked = Code("nacked")
        /// A mandatory publish matched no queue (basic.return).
        public static let unroutable = Code("unroutable")
        /// A message could not be encoded (e.g. its properties do not fit in a frame); nothing was sent.
        public static let unencodable = Code("unencodable")
        /// The operation did not finish in time.
        public static let timeout = Code("timeout")
        /// rabbitmq-c reported an error that fits none of the above.
        public static let library = Code("library")
        /// The client is shutting down or was shut down.
        public static let shutdown = Code("shutdown")
        /// The configuration's URL could not be parsed.
        public static let invalidURL = Code("invalidURL")
    }

    public let code: Code
    /// `amqp_status_enum` value or AMQP reply code (e.g. 404), when there was one.
    public let status: Int32?
    public let message: String

    public init(code: Code, status: Int32? = nil, message: String) {
        self.code = code
        self.status = status
        self.message = message
    }

    public var description: String {
        if let status { return "AMQP \(code) (\(status)): \(message)" }
        return "AMQP \(code): \(message)"
    }
}
