public struct HTTP2Request: Sendable {
    public var method: String
    /// Path and query, e.g. `/3/device/<token>`.
    public var path: String
    /// Regular headers; pseudo-headers are derived from `method`, `path` and the configuration.
    public var headers: [HTTP2Header]
    public var body: [UInt8]

    public init(method: String = "GET", path: String, headers: [HTTP2Header] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}
