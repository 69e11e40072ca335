extension AMQPEndpoint {
    /// The broker nodes an AMQP URL names: one, or several separated by commas, written either as
    /// full URLs (`amqp://u:p@h1/,amqp://u:p@h2/`) or as one URL whose host part lists them
    /// (`amqp://u:p@h1:5672,h2:5672,h3/vhost`: they share its user, password and vhost). A comma
    /// inside a password is written `%2C`.
    static func list(parsing url: String) throws(AMQPError) -> [AMQPEndpoint] {
        let pieces = url.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        if pieces.count == 1 { return [try AMQPEndpoint(parsing: url)] }
        if pieces.allSatisfy({ $0.contains("://") }) {
            var endpoints: [AMQPEndpoint] = []
            for (index, piece) in pieces.enumerated() {
                do throws(AMQPError) { endpoints.append(try AMQPEndpoint(parsing: piece)) } catch {
                    throw AMQPError(code: .invalidURL, message: "\(error.message) (URL \(index + 1) of \(pieces.count))")
                }
            }
            return endpoints
        }
        return try hostList(url)
    }

    /// `scheme://[userinfo@]host1[:port],host2[:port]…[/vhost]`.
    private static func hostList(_ url: String) throws(AMQPError) -> [AMQPEndpoint] {
        func invalid(_ why: String) -> AMQPError {
            // The URL itself is not echoed: it may contain a password.
            AMQPError(code: .invalidURL, message: "invalid AMQP URL: \(why)")
        }
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw invalid("a list of nodes needs a scheme (amqp:// or amqps://)") }
        let scheme = parts[0]
        let rest = parts[1]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...]
        guard !path.contains(",") else {
            throw invalid("a comma after the host part: list whole URLs each with its scheme (amqp://h1/,amqp://h2/) or hosts before the vhost (amqp://h1,h2/vhost)")
        }
        var userInfo = ""
        var hosts = authority[...]
        if let at = authority.lastIndex(of: "@") {
            userInfo = String(authority[...at])
            hosts = authority[authority.index(after: at)...]
        }
        var endpoints: [AMQPEndpoint] = []
        let listed = hosts.split(separator: ",", omittingEmptySubsequences: false)
        for (index, host) in listed.enumerated() {
            guard !host.isEmpty else { throw invalid("host \(index + 1) of \(listed.count) is empty") }
            do throws(AMQPError) { endpoints.append(try AMQPEndpoint(parsing: "\(scheme)://\(userInfo)\(host)\(path)")) } catch {
                throw AMQPError(code: .invalidURL, message: "\(error.message) (host \(index + 1) of \(listed.count))")
            }
        }
        return endpoints
    }
}
