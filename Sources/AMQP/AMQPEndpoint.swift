import PushCore

/// The parsed parts of an AMQP URL.
public struct AMQPEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String
    public var vhost: String
    public var tls: Bool

    public init(host: String, port: Int, user: String, password: String, vhost: String, tls: Bool) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.vhost = vhost
        self.tls = tls
    }

    /// Safe for logs: the password is left out.
    public var description: String {
        "\(tls ? "amqps" : "amqp")://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port) vhost=\(vhost)"
    }
}

extension AMQPEndpoint {
    /// Parses `amqp[s]://[user[:password]@]host[:port][/vhost]` (RabbitMQ URI spec, no query
    /// options) with the project's one URL parser.
    init(parsing url: String) throws(AMQPError) {
        func invalid(_ why: String) -> AMQPError {
            // The URL itself is not echoed: it may contain a password.
            AMQPError(code: .invalidURL, message: "invalid AMQP URL: \(why)")
        }
        do throws(ServiceURLError) {
            let parsed = try ServiceURL(parsing: url, schemes: ["amqp", "amqps"])
            guard !parsed.host.isEmpty else { throw ServiceURLError("missing host") }
            let tls = parsed.scheme == "amqps"
            var vhost = "/"
            if !parsed.rawPath.isEmpty {
                guard !parsed.rawPath.contains("/") else { throw ServiceURLError("vhost contains '/'; write it as %2f") }
                vhost = try ServiceURL.percentDecoded(parsed.rawPath, part: "vhost")
            }
            // RabbitMQ's defaults: guest/guest without user info; a user without ":" has no password.
            self.init(host: parsed.host, port: parsed.port ?? (tls ? 5671 : 5672),
                      user: parsed.user ?? "guest", password: parsed.password ?? (parsed.user == nil ? "guest" : ""),
                      vhost: vhost, tls: tls)
        } catch {
            throw invalid(error.message)
        }
    }
}
