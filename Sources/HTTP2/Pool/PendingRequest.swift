/// What a caller hands to the I/O thread: everything is prepared off that thread.
struct Submission: Sendable {
    var headerBlock: RequestHeaderBlock
    var path: String
    /// A field of this request alone besides `:path` (an `apns-id`), sent never-indexed.
    var requestHeader: HTTP2Header?
    var body: [UInt8]
    /// Whether the response keeps the client's `keptResponseHeaders`.
    var keepsResponseHeaders = true
    var deadline: ContinuousClock.Instant
    var completion: @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
}

/// One request's life on the I/O thread, across resubmissions, until its completion has run.
final class PendingRequest {
    enum Place {
        case queued
        case inFlight(Connection, streamID: Int32)
        case done
    }

    let headerBlock: RequestHeaderBlock
    let path: String
    let requestHeader: HTTP2Header?
    /// Read by nghttp2's data provider; lives here until the stream closes.
    let body: [UInt8]
    let keepsResponseHeaders: Bool
    let deadline: ContinuousClock.Instant
    private let completion: @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
    var place: Place = .queued
    /// How often the server refused it (REFUSED_STREAM or GOAWAY) and the pool resubmitted it.
    var refusals = 0

    init(_ submission: Submission) {
        headerBlock = submission.headerBlock
        path = submission.path
        requestHeader = submission.requestHeader
        body = submission.body
        keepsResponseHeaders = submission.keepsResponseHeaders
        deadline = submission.deadline
        completion = submission.completion
    }

    var isDone: Bool {
        if case .done = place { return true }
        return false
    }

    /// Runs the completion once; later outcomes (a stream closing after a timeout) are ignored.
    func complete(_ result: Result<HTTP2Response, HTTP2Error>) {
        if isDone { return }
        place = .done
        completion(result)
    }
}
