import NIOCore
import NIOHTTP1

/// An HTTP/1.1 connection of the FCM mode: Google's token endpoint speaks HTTP/1.1 too, and Python's
/// google-auth (over `requests`) asks it that way. Every route of the FCM mode answers here; of the
/// faults only reset and stall apply (HTTP/1.1 has no GOAWAY).
final class FCMSandboxHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bodies beyond this are refused: the largest FCM request is a few KiB.
    private static let maxBody = 64 * 1024

    private let id: Int
    private let responder: FCMSandboxResponder
    private let abortHandler: SandboxAbortHandler
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var uuids = SandboxUUIDGenerator()
    private var requestCount = 0

    init(id: Int, responder: FCMSandboxResponder, abortHandler: SandboxAbortHandler) {
        self.id = id
        self.responder = responder
        self.abortHandler = abortHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case let .head(head):
            self.head = head
            self.body = []
        case var .body(buffer):
            if self.body.count + buffer.readableBytes <= Self.maxBody, let bytes = buffer.readBytes(length: buffer.readableBytes) { self.body += bytes }
        case .end:
            guard let head = self.head else { return }
            self.head = nil
            self.respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let reply = self.responder.reply(
            method: head.method.rawValue, path: head.uri, authorization: head.headers.first(name: "authorization"),
            body: self.body, connectionID: self.id, uuids: &self.uuids
        )
        switch reply {
        case let .answer(answer):
            self.write(answer, keepAlive: head.isKeepAlive, context: context)
        case let .message(draft, problem):
            self.requestCount += 1
            switch self.responder.recorder.admit(draft, requestNumber: self.requestCount, draining: false) {
            case .reset: self.abortHandler.abort()
            case .stall: break
            case let .answer(status, reason, latency, _):
                let answer = self.responder.messageAnswer(status: status, reason: reason, draft: draft, problem: problem)
                let keepAlive = head.isKeepAlive
                guard latency > .zero else { return self.write(answer, keepAlive: keepAlive, context: context) }
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(latency.nanoseconds)) { [self] in
                    self.write(answer, keepAlive: keepAlive, context: context)
                }
            }
        }
    }

    private func write(_ answer: FCMSandboxHTTPAnswer, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders(answer.headers.map { ($0.name, $0.value) })
        headers.add(name: "content-length", value: String(answer.body.utf8.count))
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: answer.status)
        context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: answer.body)))), promise: nil)
        let done = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if !keepAlive { done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) } }
    }
}
