import PushCore

/// The body of every `messages:send` request of one job: `{"message":{"token":"<device>", <the
/// payload's members>}}`, with the job's priority, TTL and collapse key added to the payload's
/// `android` object (or a new one). Built once per job; only the token differs per device. The
/// payload's bytes are spliced, not re-serialised, so FCM receives what the publisher wrote.
public struct FCMMessageTemplate: Sendable, Hashable {
    /// Everything after the token's closing quote.
    private let tail: [UInt8]
    private static let head = Array(#"{"message":{"token":""#.utf8)

    /// - Parameters:
    ///   - payload: the job's payload (compact JSON, checked by `FCMJobRules`).
    ///   - expiration: the job's UNIX-seconds expiration; it becomes `android.ttl` unless the
    ///     payload gives one (0: "now or never", `0s`).
    ///   - now: UNIX seconds.
    public init(payload: [UInt8], options: FCMJobOptions, expiration: Int, now: Int) {
        var parser = JSONParser(payload, recordingRangeOf: "android", buildsRecordedMember: false)
        let androidRange: Range<Int>? = (try? parser.parseTopLevel()) != nil ? parser.recordedRange : nil
        let payloadSetsTTL = androidRange != nil && PayloadObject(bytes: payload)["android"].map(Self.hasTTL) == true

        var additions = JSONWriter(capacity: 64)
        if let priority = options.androidPriority { additions.field("priority", priority) }
        if !payloadSetsTTL {
            let seconds = expiration == 0 ? 0 : min(max(expiration - now, 0), FCMJobRules.maxTTLSeconds)
            additions.field("ttl", FCMDurationText.format(seconds: seconds))
        }
        if let collapseKey = options.collapseKey { additions.field("collapse_key", collapseKey) }
        let addedMembers = Array(additions.finish().dropFirst().dropLast())

        // The payload's members without its braces, with the additions in its android object.
        var members: [UInt8]
        if addedMembers.isEmpty {
            members = Array(payload.dropFirst().dropLast())
        } else if let androidRange, payload[androidRange].first == UInt8(ascii: "{") {
            let androidIsEmpty = payload[androidRange].count <= 2
            members = Array(payload[1...androidRange.lowerBound]) + addedMembers
            if !androidIsEmpty { members.append(UInt8(ascii: ",")) }
            members += payload[(androidRange.lowerBound + 1)..<(payload.count - 1)]
        } else {
            members = Array(payload.dropFirst().dropLast())
            if !members.isEmpty { members.append(UInt8(ascii: ",")) }
            members += Array(#""android":{"#.utf8) + addedMembers + [UInt8(ascii: "}")]
        }
        var tail: [UInt8] = [UInt8(ascii: "\"")]
        if !members.isEmpty {
            tail.append(UInt8(ascii: ","))
            tail += members
        }
        tail += Array("}}".utf8)
        self.tail = tail
    }

    private static func hasTTL(_ android: JSONValue) -> Bool {
        if case let .object(members) = android { members["ttl"] != nil } else { false }
    }

    /// The request body for one device (`FCMJobRules` checked that its token needs no escaping).
    public func body(token: String) -> [UInt8] {
        var body = [UInt8]()
        body.reserveCapacity(Self.head.count + token.utf8.count + tail.count)
        body += Self.head
        body += token.utf8
        body += tail
        return body
    }
}
