import NIOCore
import NIOHTTP1

/// Serves one HTTP/1.1 connection or one HTTP/2 stream (behind NIO's HTTP/2-to-HTTP/1 codec) of
/// the Web Push sandbox: collects the request, asks the exchange, writes the answer.
final class WebPushSandboxHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bodies past this are not kept (the answer is 413 anyway): a sender cannot fill the memory.
    private static let bodyLimit = 64 * 1024

    private let exchange: WebPushSandboxExchange
    private let httpVersion: String
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var oversized = false

    init(exchange: WebPushSandboxExchange, httpVersion: String) {
        self.exchange = exchange
        self.httpVersion = httpVersion
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            oversized = false
        case .body(let buffer):
            if body.count + buffer.readableBytes > Self.bodyLimit {
                oversized = true
            } else {
                body += buffer.readableBytesView
            }
        case .end:
            guard let head else { return }
            self.head = nil
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            var request = WebPushSandboxRequest(method: head.method.rawValue, path: head.uri, headers: headers, body: body,
                                                httpVersion: httpVersion)
            // Past the limit only the size matters: a stand-in of that size gets the 413.
            if oversized { request.body = Array(repeating: 0, count: WebPushSandboxExchange.maxBody + 1) }
            let answer = exchange.answer(request, now: SandboxWallClock.epochSeconds())
            write(answer, keepAlive: head.isKeepAlive, context: context)
        }
    }

    private func write(_ answer: WebPushSandboxAnswer, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders(answer.headers)
        headers.replaceOrAdd(name: "content-length", value: String(answer.body.utf8.count))
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: answer.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !answer.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: answer.body)))), promise: nil)
        }
        let closes = !keepAlive && httpVersion == "HTTP/1.1"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if closes { channel.close(promise: nil) }
        }
    }
}
