/// Metadata keys, in one place so dashboards can rely on them.
enum LogKeys {
    static let connectionID = "http2.connection.id"
    static let server = "http2.server"
    static let address = "http2.address"
    static let error = "http2.error"
    static let goAwayCode = "http2.goaway.code"
    static let goAwayLastStream = "http2.goaway.last_stream_id"
    static let goAwayDebugData = "http2.goaway.debug_data"
    static let maxConcurrentStreams = "http2.max_concurrent_streams"
    static let retryIn = "http2.retry_in"
    static let streamCeiling = "http2.stream_ceiling"
    static let pacedFor = "http2.paced_for"
}
