import HTTP2
import PushCore
import WebPushCore

/// The header fields of one Web Push request (RFC 8030 §5, RFC 8291 §4, RFC 8292 §3).
enum WebPushRequestHeaders {
    /// `TTL` is always sent (RFC 8030 §5.2 makes it required): the seconds until the job's
    /// `expiration`, at most 30 days; 0 (no expiration, or one past) asks the service to deliver
    /// only if the browser is reachable now, as APNs does with an expiration of 0.
    static func ttl(expiration: Int, now: Int) -> Int {
        guard expiration > now else { return 0 }
        return min(expiration - now, WebPushConfiguration.maxTTLSeconds)
    }

    static func fields(options: WebPushJobOptions, expiration: Int, now: Int, authorization: String) -> [HTTP2Header] {
        var headers = [
            HTTP2Header(name: "ttl", value: String(ttl(expiration: expiration, now: now))),
            HTTP2Header(name: "content-encoding", value: "aes128gcm"),
            HTTP2Header(name: "content-type", value: "application/octet-stream"),
            // The token is a bearer credential for 12 hours: never put it in the shared HPACK table.
            HTTP2Header(name: "authorization", value: authorization, neverIndex: true),
        ]
        if let urgency = options.urgency { headers.append(HTTP2Header(name: "urgency", value: urgency)) }
        if let topic = options.topic { headers.append(HTTP2Header(name: "topic", value: topic)) }
        return headers
    }
}
