/// A request while it has a stream on a connection: the response is accumulated here.
final class HTTP2Stream {
    let request: PendingRequest
    /// When the stream was opened: its answer's latency paces the pool (`StreamPacing`).
    let openedAt: ContinuousClock.Instant
    var id: Int32 = -1
    /// Set once nghttp2 serialized the HEADERS frame: from then on the server may have seen it.
    var headersSent = false
    /// Bytes of `request.body` already handed to nghttp2.
    var bodyOffset = 0
    var status = 0
    var headers: [HTTP2Header] = []
    var body: [UInt8] = []
    /// Set when the response passed a limit and the stream was reset: what passed it.
    var overflow: String?

    init(request: PendingRequest, openedAt: ContinuousClock.Instant) {
        self.request = request
        self.openedAt = openedAt
    }

    var response: HTTP2Response { HTTP2Response(status: status, headers: headers, body: body) }
}
