import NIOCore
import NIOHTTP2

/// What one request stream has sent so far: its HEADERS and the start of its body.
struct SandboxStreamRequest {
    /// Bodies beyond this are only counted: the largest APNs payload is 5120 bytes.
    static let maxBufferedBody = 16 * 1024

    private(set) var headers: HTTP2Frame.FramePayload.Headers?
    private(set) var body: ByteBuffer?
    private(set) var bodyLength = 0

    /// Adds one frame; true when it ended a request that has headers, which is then ready to
    /// answer (and no longer kept: the client sends nothing after END_STREAM).
    mutating func receive(_ payload: HTTP2Frame.FramePayload) -> Bool {
        switch payload {
        case .headers(let headers):
            // A second HEADERS block would be trailers, which APNs requests don't have.
            if self.headers == nil { self.headers = headers }
            return headers.endStream && self.headers != nil
        case .data(let data):
            if case .byteBuffer(var buffer) = data.data {
                self.bodyLength += buffer.readableBytes
                if self.bodyLength <= Self.maxBufferedBody {
                    if self.body == nil { self.body = buffer } else { self.body!.writeBuffer(&buffer) }
                }
            }
            return data.endStream && self.headers != nil
        default:
            return false
        }
    }
}
