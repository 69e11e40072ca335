import NIOCore
import NIOHTTP2

/// The frames of one answer, written on the connection channel for the stream they belong to.
enum SandboxResponse {
    /// How a device push's answer names the request.
    static let pushIDHeader = "apns-id"
    /// How a broadcast's and a channel-management answer name the request.
    static let broadcastIDHeader = "apns-request-id"

    /// An APNs answer: 200 with headers only, otherwise headers and a `{"reason":…}` body.
    /// `idHeader` is `pushIDHeader` or `broadcastIDHeader`.
    static func write(
        status: Int,
        reason: String?,
        idHeader: String,
        id: String,
        uniqueID: String,
        streamID: HTTP2StreamID,
        context: ChannelHandlerContext
    ) {
        let hasBody = reason != nil
        var headers = HTTP2Frame.FramePayload.Headers(headers: [":status": Self.statusText(status)], endStream: !hasBody)
        // Unique per response: keep them out of the client's HPACK dynamic table.
        headers.headers.add(name: idHeader, value: id, indexing: .nonIndexable)
        headers.headers.add(name: "apns-unique-id", value: uniqueID, indexing: .nonIndexable)
        guard let reason else {
            context.write(NIOAny(HTTP2Frame(streamID: streamID, payload: .headers(headers))), promise: nil)
            return
        }
        headers.headers.add(name: "content-type", value: "application/json")
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
        Self.write(headers: headers, body: body, streamID: streamID, context: context)
    }

    /// Answers a `/_sandbox/…` control request.
    static func writeControl(status: Int, json: String, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HTTP2Frame.FramePayload.Headers(headers: [":status": Self.statusText(status)], endStream: false)
        headers.headers.add(name: "content-type", value: "application/json")
        let body = context.channel.allocator.buffer(string: json)
        Self.write(headers: headers, body: body, streamID: streamID, context: context)
    }

    /// A channel-management answer: its status, `apns-request-id`, a created channel's
    /// `apns-channel-id`, and a JSON body when it has one.
    static func writeManagement(_ answer: SandboxChannelManagement.Answer, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HTTP2Frame.FramePayload.Headers(headers: [":status": Self.statusText(answer.status)], endStream: answer.json == nil)
        headers.headers.add(name: Self.broadcastIDHeader, value: answer.requestID, indexing: .nonIndexable)
        if let channelID = answer.channelID {
            headers.headers.add(name: "apns-channel-id", value: channelID, indexing: .nonIndexable)
        }
        guard let json = answer.json else {
            context.write(NIOAny(HTTP2Frame(streamID: streamID, payload: .headers(headers))), promise: nil)
            return
        }
        headers.headers.add(name: "content-type", value: "application/json")
        Self.write(headers: headers, body: context.channel.allocator.buffer(string: json), streamID: streamID, context: context)
    }

    /// For streams above a GOAWAY's last stream ID: never processed, the client may resend them.
    static func writeRefusal(streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        context.write(NIOAny(HTTP2Frame(streamID: streamID, payload: .rstStream(.refusedStream))), promise: nil)
    }

    private static func write(
        headers: HTTP2Frame.FramePayload.Headers,
        body: ByteBuffer,
        streamID: HTTP2StreamID,
        context: ChannelHandlerContext
    ) {
        context.write(NIOAny(HTTP2Frame(streamID: streamID, payload: .headers(headers))), promise: nil)
        let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(body), endStream: true)
        context.write(NIOAny(HTTP2Frame(streamID: streamID, payload: .data(data))), promise: nil)
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
