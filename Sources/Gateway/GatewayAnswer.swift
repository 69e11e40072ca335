import PushCore

/// What a gateway request gets back: a status and a small JSON body. Errors carry `error` (the
/// problem, in words) and, where one field is at fault, `field`.
public struct GatewayAnswer: Sendable, Error {
    public let status: Int
    public let body: [UInt8]
    public var headers: [(String, String)] = []

    init(status: Int, body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    static func error(_ status: Int, _ message: String, field: String? = nil) -> GatewayAnswer {
        var writer = JSONWriter()
        writer.field("error", message)
        if let field { writer.field("field", field) }
        return GatewayAnswer(status: status, body: writer.finish())
    }

    static func json(_ status: Int, _ build: (inout JSONWriter) -> Void) -> GatewayAnswer {
        var writer = JSONWriter()
        build(&writer)
        return GatewayAnswer(status: status, body: writer.finish())
    }

    static let unauthorized = GatewayAnswer.error(401, "missing or unknown API key: send Authorization: Bearer <key>")
    static let noKeysConfigured = GatewayAnswer.error(
        401, "this gateway has no API keys: add gateway.api_keys to the configuration file")

    static func rateLimited(retryAfter seconds: Int, key: String) -> GatewayAnswer {
        tooManyRequests(retryAfter: seconds, "API key \(key) is over its request rate; retry after \(seconds) s")
    }

    /// 429, which Mastodon retries later keeping the subscription (any other 4xx deletes it).
    static func relayRateLimited(retryAfter seconds: Int, _ problem: String) -> GatewayAnswer {
        tooManyRequests(retryAfter: seconds, "\(problem); nothing was relayed, retry after \(seconds) s")
    }

    private static func tooManyRequests(retryAfter seconds: Int, _ message: String) -> GatewayAnswer {
        var answer = GatewayAnswer.error(429, message)
        answer.headers.append(("Retry-After", String(seconds)))
        return answer
    }
}
