/// Why a request failed, phrased so the caller can decide whether resending is safe. `code` is an
/// extensible struct, as `AMQPError.Code` and `RedisError.Code` are: a new failure need not break
/// callers' switches.
public struct HTTP2Error: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// DNS, TCP or proxy failure: the request was never sent.
        public static let connectFailed = Code("connectFailed")
        /// Handshake or certificate verification failed: the request was never sent.
        public static let tlsFailed = Code("tlsFailed")
        /// The handshake succeeded but the server did not select h2 in ALPN (it speaks HTTP/1.1
        /// only): the request was never sent.
        public static let http2NotOffered = Code("http2NotOffered")
        /// The host resolved only to addresses `onlyGlobalAddresses` refuses: nothing was
        /// connected, the request was never sent.
        public static let addressNotAllowed = Code("addressNotAllowed")
        /// Refused by the server (REFUSED_STREAM or above a GOAWAY's last stream id) more often
        /// than the pool resubmits: the server did not process it.
        public static let refused = Code("refused")
        /// The connection died after the request was (possibly) sent: the outcome is unknown.
        public static let connectionLost = Code("connectionLost")
        /// No response within `requestTimeout` to a request that was sent: the outcome is unknown.
        public static let timeout = Code("timeout")
        /// `requestTimeout` passed while the request still waited for a connection: never sent.
        public static let unsent = Code("unsent")
        public static let protocolError = Code("protocolError")
        /// The client shut down before the request completed.
        public static let shutdown = Code("shutdown")
        /// The response passed `HTTP2ResponseLimits` (an endless body, too many or too long headers):
        /// the stream was reset. The server may have acted on the request.
        public static let responseTooLarge = Code("responseTooLarge")
    }

    public let code: Code
    public let message: String
    /// Where it was raised (`#fileID:#line`), for a person reading a debug log; not in `description`.
    public let location: String

    public init(code: Code, message: String, file: StaticString = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.location = "\(file):\(line)"
    }

    /// True when the server cannot have processed the request, so resending it cannot duplicate it.
    public var requestWasNotProcessed: Bool {
        [Code.connectFailed, .tlsFailed, .http2NotOffered, .addressNotAllowed, .refused, .unsent].contains(code)
    }

    public var description: String { "HTTP/2 \(code): \(message)" }
    public var debugDescription: String { "HTTP/2 \(code): \(message) (at \(location))" }
}
