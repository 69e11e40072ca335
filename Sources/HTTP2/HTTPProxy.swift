/// An HTTP CONNECT proxy in front of the server; TLS runs end to end through the tunnel.
public struct HTTPProxy: Sendable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?

    public init(host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }
}
