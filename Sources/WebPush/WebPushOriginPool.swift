import HTTP2

/// How one push-service origin is reached: an HTTP/2 pool (its own I/O thread), or, for a service
/// that does not offer HTTP/2, HTTP/1.1 connections on the shared event loops.
enum WebPushOriginPool: Sendable {
    case http2(HTTP2Client)
    case http1(WebPushHTTP1Origin)

    var streamCapacity: Int {
        switch self {
        case .http2(let client): client.streamCapacity
        case .http1(let origin): origin.streamCapacity
        }
    }

    /// Identifies the pool while it shuts down.
    var identity: ObjectIdentifier {
        switch self {
        case .http2(let client): ObjectIdentifier(client)
        case .http1(let origin): ObjectIdentifier(origin)
        }
    }

    func shutdown() async {
        switch self {
        case .http2(let client): await client.shutdown()
        case .http1(let origin): await origin.shutdown()
        }
    }
}
