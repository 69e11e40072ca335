/// The most of a response a client keeps. Every push service answers with a status, a few headers
/// and a short JSON or text body (an error reason, a message name); anything far larger is a
/// broken or hostile server, and a stream that passes a limit is reset rather than read on.
public struct HTTP2ResponseLimits: Sendable, Equatable {
    /// Body bytes kept per response.
    public var maxBodyBytes: Int
    /// Response headers kept per response (the ones `keptResponseHeaders` names, or all).
    public var maxKeptHeaders: Int
    /// Bytes of one kept header's value.
    public var maxHeaderValueBytes: Int

    public init(maxBodyBytes: Int = 8 * 1024, maxKeptHeaders: Int = 32, maxHeaderValueBytes: Int = 2 * 1024) {
        self.maxBodyBytes = maxBodyBytes
        self.maxKeptHeaders = maxKeptHeaders
        self.maxHeaderValueBytes = maxHeaderValueBytes
    }
}
