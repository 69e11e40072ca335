import Foundation

/// Reads a job message body (DESIGN.md "The job") into a `PushJob`, checking every field.
public struct JobParser: Sendable {
    /// Fields the contract defines; anything else is most likely a typo the publisher wants to hear about.
    static let knownFields: Set<String> = [
        "id", "app", "tokens", "groups", "push_type", "priority", "expiration", "collapse_id", "topic",
        "payload", "attempts", "chunk",
    ]
    public static let maxIDLength = 200
    public static let maxGroupNameLength = 256

    public init() {}

    /// - Parameters:
    ///   - messageID: the AMQP message-id, used when the body has no `id`.
    ///   - now: UNIX seconds, for relative expirations.
    public func parse(_ body: [UInt8], messageID: String?, now: Int, makeID: () -> String) throws(JobRejection) -> PushJob {
        let object: [String: Any]
        do {
            let any = try JSONSerialization.jsonObject(with: Data(body), options: [])
            guard let dictionary = any as? [String: Any] else {
                throw JobRejection(field: nil, "the message must be a JSON object, got \(Self.typeName(any))")
            }
            object = dictionary
        } catch let rejection as JobRejection {
            throw rejection
        } catch {
            throw JobRejection(field: nil, "the message is not valid JSON (\(Self.describe(error)))")
        }
        for key in object.keys where !Self.knownFields.contains(key) && !key.hasPrefix("x-") {
            throw JobRejection(field: key, "unknown field (known: \(Self.knownFields.sorted().joined(separator: ", ")); prefix your own fields with x-)")
        }

        let id = try string(object, "id", maxBytes: Self.maxIDLength) ?? messageID.flatMap { $0.isEmpty ? nil : $0 } ?? makeID()
        let app = try string(object, "app", maxBytes: 64) ?? "default"
        guard !app.isEmpty, app.utf8.allSatisfy(Self.isNameByte) else {
            throw JobRejection(field: "app", "must be 1–64 characters of A–Z, a–z, 0–9, '.', '_' or '-'")
        }
        let tokens = try parseTokens(object["tokens"])
        let groups = try parseGroups(object["groups"])
        guard !tokens.isEmpty || !groups.isEmpty else {
            throw JobRejection(field: "tokens", "the job names no devices: give at least one token in \"tokens\" or one group in \"groups\"")
        }

        guard let payloadValue = object["payload"] else {
            throw JobRejection(field: "payload", "is required: the APNs payload object, e.g. {\"aps\":{\"alert\":\"Hello\"}}")
        }
        guard let payload = payloadValue as? [String: Any] else {
            throw JobRejection(field: "payload", "must be a JSON object, got \(Self.typeName(payloadValue))")
        }
        let pushType = try parsePushType(object["push_type"], payload: payload)
        if pushType != .mdm {
            guard let aps = payload["aps"] else {
                throw JobRejection(field: "payload.aps", "is required for \(pushType.rawValue) pushes (APNs reads the aps dictionary)")
            }
            guard aps is [String: Any] else {
                throw JobRejection(field: "payload.aps", "must be a JSON object, got \(Self.typeName(aps))")
            }
        }
        let payloadBytes: [UInt8]
        do {
            payloadBytes = Array(try JSONSerialization.data(withJSONObject: payload, options: [.withoutEscapingSlashes]))
        } catch {
            throw JobRejection(field: "payload", "cannot be serialised (\(Self.describe(error)))")
        }
        guard payloadBytes.count <= pushType.maxPayloadBytes else {
            throw JobRejection(field: "payload", "is \(payloadBytes.count) bytes; APNs allows at most \(pushType.maxPayloadBytes) bytes for \(pushType.rawValue) pushes")
        }

        let priority = try parsePriority(object["priority"], pushType: pushType)
        let expiration = try parseExpiration(object["expiration"], now: now)
        let collapseID = try string(object, "collapse_id", maxBytes: 64)
        let topic = try string(object, "topic", maxBytes: 255)
        if let topic, topic.isEmpty || topic.contains(" ") {
            throw JobRejection(field: "topic", "must be a bundle ID such as com.example.app (no spaces)")
        }
        let attempts = try integer(object, "attempts", range: 0...1000) ?? 0
        let chunk = try integer(object, "chunk", range: 0...Int(Int32.max))

        return PushJob(id: id, app: app, tokens: tokens, groups: groups, pushType: pushType, priority: priority,
                       expiration: expiration, collapseID: collapseID, topic: topic, payload: payloadBytes,
                       attempts: attempts, chunk: chunk)
    }

    private func parseTokens(_ value: Any?) throws(JobRejection) -> [DeviceToken] {
        guard let value, !(value is NSNull) else { return [] }
        guard let array = value as? [Any] else {
            throw JobRejection(field: "tokens", "must be an array of device token strings, got \(Self.typeName(value))")
        }
        var tokens = [DeviceToken]()
        tokens.reserveCapacity(array.count)
        var seen = Set<String>()
        for (index, element) in array.enumerated() {
            guard let text = element as? String else {
                throw JobRejection(field: "tokens[\(index)]", "must be a string, got \(Self.typeName(element))")
            }
            let token: DeviceToken
            do { token = try DeviceToken(validating: text) } catch {
                throw JobRejection(field: "tokens[\(index)]", error.description)
            }
            // A device named twice gets one notification.
            if seen.insert(token.hex).inserted { tokens.append(token) }
        }
        return tokens
    }

    private func parseGroups(_ value: Any?) throws(JobRejection) -> [String] {
        guard let value, !(value is NSNull) else { return [] }
        guard let array = value as? [Any] else {
            throw JobRejection(field: "groups", "must be an array of group names, got \(Self.typeName(value))")
        }
        var groups = [String]()
        for (index, element) in array.enumerated() {
            guard let name = element as? String else {
                throw JobRejection(field: "groups[\(index)]", "must be a string, got \(Self.typeName(element))")
            }
            guard !name.isEmpty, name.utf8.count <= Self.maxGroupNameLength, !name.contains(where: \.isWhitespace) else {
                throw JobRejection(field: "groups[\(index)]", "must be 1–\(Self.maxGroupNameLength) bytes without spaces")
            }
            if !groups.contains(name) { groups.append(name) }
        }
        return groups
    }

    private func parsePushType(_ value: Any?, payload: [String: Any]) throws(JobRejection) -> APNsPushType {
        guard let value, !(value is NSNull) else {
            // DESIGN.md: background when aps carries nothing but content-available.
            if let aps = payload["aps"] as? [String: Any], aps.count == 1, aps["content-available"] != nil { return .background }
            return .alert
        }
        guard let text = value as? String else {
            throw JobRejection(field: "push_type", "must be a string, got \(Self.typeName(value))")
        }
        guard let type = APNsPushType(rawValue: text) else {
            throw JobRejection(field: "push_type", "unknown push type \"\(text)\" (one of \(APNsPushType.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return type
    }

    private func parsePriority(_ value: Any?, pushType: APNsPushType) throws(JobRejection) -> Int {
        guard let value, !(value is NSNull) else { return pushType == .background ? 5 : 10 }
        guard let number = Self.exactInteger(value), [1, 5, 10].contains(number) else {
            throw JobRejection(field: "priority", "must be 10, 5 or 1, got \(Self.render(value))")
        }
        if pushType == .background, number == 10 {
            throw JobRejection(field: "priority", "background pushes must use priority 5 or 1 (APNs rejects 10)")
        }
        return number
    }

    private func parseExpiration(_ value: Any?, now: Int) throws(JobRejection) -> Int {
        guard let value, !(value is NSNull) else { return 0 }
        if let text = value as? String {
            guard text.hasPrefix("+"), let seconds = Int(text.dropFirst()), seconds >= 0, seconds <= 366 * 86400 else {
                throw JobRejection(field: "expiration", "a string must be \"+N\": N seconds from now (at most a year), got \"\(text)\"")
            }
            return now + seconds
        }
        guard let seconds = Self.exactInteger(value), seconds >= 0 else {
            throw JobRejection(field: "expiration", "must be UNIX seconds (0 = try once) or \"+N\" seconds from now, got \(Self.render(value))")
        }
        return seconds
    }

    private func string(_ object: [String: Any], _ key: String, maxBytes: Int) throws(JobRejection) -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else {
            throw JobRejection(field: key, "must be a string, got \(Self.typeName(value))")
        }
        guard text.utf8.count <= maxBytes else {
            throw JobRejection(field: key, "is \(text.utf8.count) bytes; at most \(maxBytes) allowed")
        }
        return text
    }

    private func integer(_ object: [String: Any], _ key: String, range: ClosedRange<Int>) throws(JobRejection) -> Int? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let number = Self.exactInteger(value), range.contains(number) else {
            throw JobRejection(field: key, "must be an integer in \(range.lowerBound)…\(range.upperBound), got \(Self.render(value))")
        }
        return number
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// JSON numbers arrive as NSNumber; booleans too, so they are told apart explicitly.
    static func exactInteger(_ value: Any) -> Int? {
        if value is Bool { return nil }
        if let number = value as? NSNumber {
            // 5.0 counts as 5; 5.5 is not an integer.
            let double = number.doubleValue
            guard double == double.rounded(), abs(double) < 9e15 else { return nil }
            return Int(double)
        }
        return nil
    }

    static func typeName(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case is Bool: "a boolean"
        case is String: "a string"
        case is NSNumber: "a number"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        default: "\(type(of: value))"
        }
    }

    static func render(_ value: Any) -> String {
        if let text = value as? String { return "\"\(text.prefix(40))\"" }
        if value is Bool { return "\(value)" }
        if let number = value as? NSNumber { return number.stringValue }
        return typeName(value)
    }

    static func describe(_ error: any Error) -> String {
        let text = "\(error)"
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
