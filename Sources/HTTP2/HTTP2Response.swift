public struct HTTP2Response: Sendable {
    public var status: Int
    /// Response headers and trailers without pseudo-headers; names are lowercase.
    public var headers: [HTTP2Header]
    public var body: [UInt8]

    public init(status: Int, headers: [HTTP2Header] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name == wanted }?.value
    }
}
