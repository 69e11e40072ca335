import Logging
import OwnerThread

/// An HTTP/2-over-TLS client with a connection pool, driven by one dedicated I/O thread.
///
/// Requests queue FIFO and go to the least-loaded ready connection below its stream cap;
/// more connections open (up to `maxConnections`) when none has room. Completions run on the
/// I/O thread: keep them cheap.
public final class HTTP2Client: Sendable {
    private let shared: ClientShared
    private let authority: String
    private let requestTimeout: Duration

    public init(configuration: HTTP2ClientConfiguration, logger: Logger) {
        let configuration = configuration.normalized
        var logger = logger
        logger[metadataKey: LogKeys.server] = "\(configuration.host):\(configuration.port)"
        let shared = ClientShared(initialStreamCapacity: configuration.maxConnections * configuration.maxStreamsPerConnection)
        self.shared = shared
        authority = configuration.authority
        requestTimeout = configuration.requestTimeout
        guard let wakeup = shared.wakeup else { return }
        do {
            try OwnerThread.start(name: configuration.threadName) { [logger] in
                do {
                    let pool = ConnectionPool(configuration: configuration, logger: logger, shared: shared, wakeup: wakeup)
                    pool.run()
                }
                // Only now, with the pool and its C objects (SSL_CTX, SSL, nghttp2 sessions) freed, is
                // anyone told that the thread is done: after that the process may exit, and OpenSSL's
                // exit handler frees the globals an SSL_CTX_free would still be using (the heap
                // corruption seen after "worker stopped").
                shared.threadExited()
            }
        } catch {
            logger.error("cannot start the HTTP/2 I/O thread", metadata: [LogKeys.error: "\(error.message)"])
            shared.failStartup(HTTP2Error(code: .protocolError, message: error.message))
        }
    }

    deinit {
        // Without an explicit shutdown, stop the thread anyway; nobody waits for it.
        shared.requestShutdown(waiter: nil)
    }

    public func send(_ request: HTTP2Request, completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void) {
        send(headers: sharedHeaders(method: request.method, headers: request.headers), path: request.path,
             body: request.body, completion: completion)
    }

    /// Flattens the fields that many requests share (method, headers; not the path) once.
    public func sharedHeaders(method: String, headers: [HTTP2Header]) -> RequestHeaderBlock {
        RequestHeaderBlock(method: method, authority: authority, headers: headers)
    }

    /// Sends a request made of shared headers, its own path and a body.
    /// `requestHeader`: one more field of this request alone (lowercase name), sent never-indexed,
    /// so a per-request id does not cost the shared block's reuse.
    /// `keepsResponseHeaders`: false when the caller already knows what the kept headers would say
    /// (APNs echoes the apns-id it was sent): the response then has none, and costs no Strings.
    public func send(headers: RequestHeaderBlock, path: String, requestHeader: HTTP2Header? = nil, body: [UInt8],
                     keepsResponseHeaders: Bool = true,
                     completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void) {
        let submission = Submission(headerBlock: headers, path: path, requestHeader: requestHeader, body: body,
                                    keepsResponseHeaders: keepsResponseHeaders, deadline: .now + requestTimeout,
                                    completion: completion)
        if let failure = shared.submit(submission) {
            completion(.failure(failure))
        }
    }

    public func send(_ request: HTTP2Request) async throws(HTTP2Error) -> HTTP2Response {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTP2Response, HTTP2Error>, Never>) in
            send(request) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    public var statistics: HTTP2ClientStatistics { shared.statistics }

    /// How many requests the server lets the pool have in flight now: for each open connection
    /// min(`maxStreamsPerConnection`, the peer's live SETTINGS_MAX_CONCURRENT_STREAMS), and for the
    /// connections not open yet the last limit a peer announced (`maxStreamsPerConnection` before
    /// any). Callers size their own flow control from it.
    public var streamCapacity: Int { shared.streamCapacity.load(ordering: .relaxed) }

    /// Whether the caller holds requests back because `streamCapacity` is full: the pacing then
    /// raises its ceiling on timely answers though the requests on the wire stay below it.
    public func noteDemandHeldBack(_ heldBack: Bool) {
        shared.demandHeldBack.store(heldBack, ordering: .relaxed)
    }

    /// Sends GOAWAY(NO_ERROR) and closes every connection, fails queued and in-flight requests
    /// with `.shutdown`, and returns once the I/O thread has exited.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            shared.requestShutdown(waiter: continuation)
        }
    }
}
