/// Why the relay will not take a Web Push message: the HTTP status to answer with and a message
/// naming the header, path segment or body part at fault and the problem.
public struct RelayRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// 400 (a header, the body or the device token is wrong), 404 (not a relay path or environment),
    /// 413 (the body is larger than `WebPushRelay.maxBodyBytes`) or 415 (an unknown Content-Encoding).
    public let status: Int
    public let message: String

    public init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status): \(message)" }

    static func badRequest(_ message: String) -> RelayRefusal { RelayRefusal(status: 400, message) }
}
