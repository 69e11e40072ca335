import NIOCore
import NIOHTTP2

/// One request stream: collects HEADERS and DATA, hands the complete request to its connection,
/// and writes the answer the connection decides on.
final class SandboxStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// Bodies beyond this are only counted: the largest APNs payload is 5120 bytes.
    private static let maxBufferedBody = 16 * 1024

    private let connection: SandboxConnectionHandler
    private var headers: HTTP2Frame.FramePayload.Headers?
    private var body: ByteBuffer?
    private var bodyLength = 0
    private var complete = false

    init(connection: SandboxConnectionHandler) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .headers(let headers):
            // A second HEADERS block would be trailers, which APNs requests don't have.
            if self.headers == nil { self.headers = headers }
            if headers.endStream { self.finish(context: context) }
        case .data(let data):
            if case .byteBuffer(var buffer) = data.data {
                self.bodyLength += buffer.readableBytes
                if self.bodyLength <= Self.maxBufferedBody {
                    if self.body == nil { self.body = buffer } else { self.body!.writeBuffer(&buffer) }
                }
            }
            if data.endStream { self.finish(context: context) }
        default:
            break
        }
    }

    private func finish(context: ChannelHandlerContext) {
        guard !self.complete, let headers = self.headers else { return }
        self.complete = true
        let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
        self.connection.handle(
            headers: headers, body: self.body, bodyLength: self.bodyLength, streamID: streamID, stream: self, context: context
        )
        self.body = nil
    }

    func respond(context: ChannelHandlerContext, status: Int, reason: String?, apnsID: String, uniqueID: String) {
        let hasBody = reason != nil
        var frame = HTTP2Frame.FramePayload.Headers(headers: [":status": Self.statusText(status)], endStream: !hasBody)
        // Unique per response: keep them out of the client's HPACK dynamic table.
        frame.headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        frame.headers.add(name: "apns-unique-id", value: uniqueID, indexing: .nonIndexable)
        guard let reason else {
            context.writeAndFlush(self.wrapOutboundOut(.headers(frame)), promise: nil)
            return
        }
        frame.headers.add(name: "content-type", value: "application/json")
        var body = context.channel.allocator.buffer(capacity: 64)
        body.writeString(#"{"reason":""#)
        Self.writeJSONStringContent(reason, to: &body)
        if status == 410 {
            // APNs: when the token stopped being valid for the topic, in milliseconds.
            body.writeString(#"","timestamp":"#)
            body.writeString(String(SandboxWallClock.epochMilliseconds()))
            body.writeString("}")
        } else {
            body.writeString(#""}"#)
        }
        context.write(self.wrapOutboundOut(.headers(frame)), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

    /// Answers a `/_sandbox/…` control request.
    func respondControl(context: ChannelHandlerContext, status: Int, json: String) {
        var frame = HTTP2Frame.FramePayload.Headers(headers: [":status": Self.statusText(status)], endStream: false)
        frame.headers.add(name: "content-type", value: "application/json")
        var body = context.channel.allocator.buffer(capacity: json.utf8.count)
        body.writeString(json)
        context.write(self.wrapOutboundOut(.headers(frame)), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

    /// For streams above a GOAWAY's last stream ID: never processed, the client may resend them.
    func refuse(context: ChannelHandlerContext) {
        context.writeAndFlush(self.wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
    }

    /// Rule reasons come from users; APNs' own never need escaping, so this is almost always a copy.
    private static func writeJSONStringContent(_ text: String, to buffer: inout ByteBuffer) {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else {
            buffer.writeString(text)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                buffer.writeInteger(UInt8(ascii: "\\"))
                buffer.writeInteger(byte)
            case 0..<0x20:
                buffer.writeString("\\u00")
                buffer.writeInteger(Self.hexDigits[Int(byte >> 4)])
                buffer.writeInteger(Self.hexDigits[Int(byte & 0xF)])
            default:
                buffer.writeInteger(byte)
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func statusText(_ status: Int) -> String {
        status == 200 ? "200" : String(status)
    }
}
