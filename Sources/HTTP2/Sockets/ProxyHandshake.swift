import PushCore
/// The HTTP/1.1 CONNECT exchange that opens a tunnel through an HTTP proxy before TLS.
enum ProxyHandshake {
    enum Reply: Equatable {
        /// The header block has not fully arrived yet.
        case incomplete
        /// 2xx: the tunnel is open. `headerLength` bytes belong to the proxy's reply.
        case established(headerLength: Int)
        case rejected(statusLine: String)
    }

    /// Replies longer than this are not a proxy talking to us.
    static let maximumReplyLength = 16 * 1024

    static func request(host: String, port: Int, proxy: HTTPProxy) -> [UInt8] {
        let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var text = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let username = proxy.username {
            let credentials = Base64.encode("\(username):\(proxy.password ?? "")".utf8)
            text += "Proxy-Authorization: Basic \(credentials)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    static func parse(_ reply: [UInt8]) -> Reply {
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard reply.count >= 4,
              let end = (0...(reply.count - 4)).first(where: { reply[$0..<$0 + 4].elementsEqual(terminator) }) else {
            return .incomplete
        }
        let lineEnd = reply.firstIndex(of: 13) ?? end
        let statusLine = String(decoding: reply[..<lineEnd], as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (200..<300).contains(status) else {
            return .rejected(statusLine: statusLine)
        }
        return .established(headerLength: end + 4)
    }
}
