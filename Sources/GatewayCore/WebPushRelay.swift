import PushCore

/// A Web Push → APNs relay compatible with toot-relay (its README): a sender such as Mastodon
/// POSTs an RFC 8030 push message to `/relay-to/<development|production>/<device-token>[/<extra>]`,
/// and the still-encrypted body goes to the device in an APNs payload (`RelayPayload`) that the
/// app's Notification Service Extension decrypts. This turns one request into a Pushworker job;
/// the caller does the HTTP. docs/reference/relay.md describes the translation.
public enum WebPushRelay {
    /// APNs' limit for an alert's payload (Apple, "Generating a remote notification").
    public static let maxPayloadBytes = 4096

    /// The longest extra part (after percent-decoding) a relay URL may carry: enough for an account
    /// name or an identifier, and small enough to leave the body most of the payload.
    public static let maxExtraBytes = 256

    /// The largest body accepted, whatever the encoding and extra part; a larger one is refused
    /// with 413. Every body up to it fits APNs' 4,096 bytes, derived from `RelayPayload`'s layout:
    ///
    ///     {"aps":{"alert":"🎺","mutable-content":1,"content-available":1}   65 bytes (🎺 is 4 UTF-8 bytes)
    ///     ,"p":"…"                                                          7 + Z85 length of the body
    ///     ,"k":"…"  the 65-byte key: 16 groups of 4 → 80 characters, 1 byte → 2    7 + 82 = 89
    ///     ,"s":"…"  the 16-byte salt: 4 groups → 20 characters                     7 + 20 = 27
    ///     ,"x":"…"  at most maxExtraBytes (nothing in it is escaped)               7 + 256 = 263
    ///     ,"e":"aes128gcm"                                                         16
    ///     }                                                                        1
    ///
    /// 65 + 7 + 89 + 27 + 263 + 16 + 1 = 468 bytes around the body's encoding, so `p` may take
    /// 4,096 − 468 = 3,628 characters. Z85 writes 4 bytes as 5 characters and a 1–3-byte tail as
    /// 2–4: 3,628 = 725 × 5 + 3, that is 725 × 4 + 2 = 2,902 bytes; 2,903 bytes would take 3,629.
    /// One limit for both encodings keeps it simple to state (an aes128gcm body counts its 86-byte
    /// header, since `p` carries the whole body).
    public static let maxBodyBytes = 2902

    /// Turns a relay request into a job.
    ///
    /// - Parameters:
    ///   - path: the request target's path as received (percent-encoded); see `RelayPath` for
    ///     how it is decoded.
    ///   - header: a request header's value by name, matched case-insensitively by the caller; nil
    ///     when absent.
    ///   - body: the request body, the encrypted message.
    ///   - app: the Pushworker app that sends to the environment's devices.
    ///   - jobID: the job's `id`.
    ///   - now: UNIX seconds, for the expiration the TTL gives.
    /// - Throws: `RelayRefusal` with 404 for a path that is not a relay path or names another
    ///   environment, 415 for a Content-Encoding other than aesgcm or aes128gcm, 413 for a body
    ///   over `maxBodyBytes`, 400 for anything else wrong (naming the header, path segment or body part).
    public static func job(path: String, header: (String) -> String?, body: [UInt8],
                           app: (RelayEnvironment) -> String, jobID: String, now: Int) throws(RelayRefusal) -> RelayJob {
        let target = try RelayPath(path)
        let encoding = try contentEncoding(header("Content-Encoding"))
        guard !body.isEmpty else {
            throw .badRequest("body: is empty; a Web Push message carries the encrypted content")
        }
        guard body.count <= maxBodyBytes else {
            throw RelayRefusal(status: 413, "body: is \(body.count) bytes; this relay takes at most \(maxBodyBytes) bytes (the largest that fits APNs' \(maxPayloadBytes)-byte payload once encoded)")
        }
        let encryption: RelayEncryption
        switch encoding {
        case .aesgcm: encryption = try RelayEncryption(aesgcmHeader: header)
        case .aes128gcm: encryption = try RelayEncryption(aes128gcmBody: body)
        }
        let delivery = try RelayDeliveryHeaders(header: header, now: now)

        // maxBodyBytes makes this hold; checked all the same, since APNs would refuse every attempt.
        let size = RelayPayload.size(bodyBytes: body.count, extraBytes: target.extra?.utf8.count, encoding: encoding)
        guard size <= maxPayloadBytes else {
            throw RelayRefusal(status: 413, "body: the APNs payload would be \(size) bytes, over APNs' \(maxPayloadBytes); this relay takes bodies of at most \(maxBodyBytes) bytes")
        }
        let payload = RelayPayload.bytes(body: body, encryption: encryption, extra: target.extra)
        assert(payload.count == size, "RelayPayload.size is \(size), the payload \(payload.count) bytes")

        var writer = JSONWriter(capacity: payload.count + 256)
        writer.field("id", jobID)
        writer.field("app", app(target.environment))
        writer.field("tokens", strings: [target.token.identity])
        writer.field("push_type", "alert")
        writer.field("priority", delivery.priority)
        writer.field("expiration", delivery.expiration)
        if let collapseID = delivery.collapseID { writer.field("collapse_id", collapseID) }
        writer.field("payload", rawJSON: payload)
        return RelayJob(environment: target.environment, token: target.token.identity, body: writer.finish())
    }

    /// The environment a relay path names, or nil when `job` would answer 404 for it: what the
    /// gateway's per-app limit needs before the body is read.
    public static func environment(path: String) -> RelayEnvironment? {
        RelayPath.environment(of: path)
    }

    private static func contentEncoding(_ value: String?) throws(RelayRefusal) -> RelayEncryption.Encoding {
        let accepted = "this relay takes aesgcm (draft-ietf-webpush-encryption-04) or aes128gcm (RFC 8291)"
        guard let value else {
            throw RelayRefusal(status: 415, "header Content-Encoding is missing; \(accepted)")
        }
        guard let encoding = RelayEncryption.Encoding(rawValue: RelayDeliveryHeaders.trimmed(value).lowercased()) else {
            throw RelayRefusal(status: 415, "header Content-Encoding: \(RelayDeliveryHeaders.shown(value)) is not one the relay reads; \(accepted)")
        }
        return encoding
    }
}
