import Foundation
import PushCore

/// One request to the Web Push sandbox and its answer, decided apart from the network code.
struct WebPushSandboxRequest: Sendable {
    var method: String
    var path: String
    /// Lowercase names.
    var headers: [String: String]
    var body: [UInt8]
    var httpVersion: String
}

struct WebPushSandboxAnswer: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: String = ""
}

/// A push service's side of RFC 8030, RFC 8291 and RFC 8292, as strict as the strictest service:
///   POST /wp/<id>  a message for a subscription: 404 unknown, 410 unsubscribed, 401/403 VAPID
///                  (401 "VAPID public key mismatch" for a key not the subscription's),
///                  scripted rules, 400 without TTL or with a body that does not decrypt, 415 for an
///                  encoding other than aes128gcm, 413 over 4096 bytes, else 201 with `Location`
///                  and the TTL kept (at most `maxTTL`).
/// Control (loopback, unauthenticated, not recorded), under /_sandbox/webpush/:
///   POST   subscriptions          {"count":N,"applicationServerKey":"<base64url>"} → the new subscriptions
///   DELETE subscriptions/<id>     the browser unsubscribed: 410 from now on
///   GET    stats                  {"requests":N,"accepted":N}
///   GET    received               every answered message as JSON lines (plaintext as text)
///   PUT    rules                  [{"idPrefix","status","reason","retryAfterSeconds","times"}]
///   POST   revoke                 {"publicKey":"<base64url>"}: that VAPID key is refused (403)
///   POST   reset                  clear the record and the rules' counters
struct WebPushSandboxExchange: Sendable {
    let subscriptions: WebPushSandboxSubscriptions
    let state: WebPushSandboxState
    let vapid: SandboxVAPIDCache
    /// `https://127.0.0.1:<port>`: the VAPID audience, and the endpoints' prefix.
    let origin: String
    let maxTTL: Int
    /// Print one line per answered message (for the demo and CI logs).
    var logsMessages = false

    static let controlPrefix = "/_sandbox/webpush/"
    static let maxBody = 4096

    func answer(_ request: WebPushSandboxRequest, now: Int) -> WebPushSandboxAnswer {
        if request.path.hasPrefix(Self.controlPrefix) { return control(request) }
        guard request.method == "POST", request.path.hasPrefix("/wp/") else {
            return WebPushSandboxAnswer(status: 404, body: #"{"reason":"NotFound"}"#)
        }
        let id = String(request.path.dropFirst("/wp/".count).prefix { $0 != "?" })
        var record = Record(id: id, request: request)
        let answer = push(request, id: id, now: now, record: &record)
        let received = record.received(status: answer.status, reason: answer.status == 201 ? nil : Self.reason(in: answer.body))
        state.record(received)
        if logsMessages { Self.log(received) }
        return answer
    }

    private struct Record {
        let id: String
        let request: WebPushSandboxRequest
        var plaintext: [UInt8] = []
        var subject: String?
        var vapidKey: String?
        var ttl: Int?

        init(id: String, request: WebPushSandboxRequest) {
            self.id = id
            self.request = request
        }

        func received(status: Int, reason: String?) -> ReceivedWebPush {
            ReceivedWebPush(subscriptionID: id, status: status, reason: reason, plaintext: plaintext, ttl: ttl,
                            urgency: request.headers["urgency"], topic: request.headers["topic"], subject: subject,
                            vapidKey: vapidKey, httpVersion: request.httpVersion, receivedAtMilliseconds: UnixTime.now().milliseconds)
        }
    }

    private func push(_ request: WebPushSandboxRequest, id: String, now: Int, record: inout Record) -> WebPushSandboxAnswer {
        let subscription: SandboxWebPushSubscription
        switch subscriptions.lookup(id) {
        case .unknown: return Self.refusal(404, "NotFound")
        case .gone: return Self.refusal(410, "Gone")
        case .active(let found): subscription = found
        }
        let verified: SandboxVAPIDVerifier.Verified
        do throws(SandboxVAPIDVerifier.Refusal) {
            verified = try vapid.verify(authorization: request.headers["authorization"], origin: origin, now: now)
        } catch {
            return Self.refusal(error.status, error.reason)
        }
        record.subject = verified.subject
        record.vapidKey = Base64.encode(verified.publicKey, urlSafe: true, padded: false)
        if state.isRevoked(verified.publicKey) { return Self.refusal(403, "BadJwtToken: this VAPID key was revoked") }
        if let expected = subscription.applicationServerKey, expected != verified.publicKey {
            // Mozilla's answer for a subscription made with another key (FCM's is a 403 whose
            // text says the credentials "do not correspond" to the subscription's).
            return WebPushSandboxAnswer(status: 401, headers: [("content-type", "application/json")],
                                        body: #"{"code":401,"errno":109,"error":"Unauthorized","message":"VAPID public key mismatch"}"#)
        }
        if let rule = state.rule(for: id) {
            var answer = Self.refusal(rule.status, rule.reason ?? "Scripted")
            if let seconds = rule.retryAfterSeconds { answer.headers.append(("retry-after", String(seconds))) }
            return answer
        }
        guard let ttlText = request.headers["ttl"], let ttl = Int(ttlText), ttl >= 0 else {
            return Self.refusal(400, "MissingTTL: the TTL header is required (RFC 8030 §5.2)")
        }
        guard request.headers["content-encoding"] == "aes128gcm" else {
            return Self.refusal(415, "UnsupportedEncoding: only aes128gcm is accepted")
        }
        guard request.body.count <= Self.maxBody else { return Self.refusal(413, "PayloadTooLarge: \(request.body.count) bytes") }
        if let urgency = request.headers["urgency"], !["very-low", "low", "normal", "high"].contains(urgency) {
            return Self.refusal(400, "BadUrgency")
        }
        if let topic = request.headers["topic"], topic.isEmpty || topic.utf8.count > 32
            || !topic.utf8.allSatisfy(Self.isTopicByte) {
            return Self.refusal(400, "BadTopic")
        }
        do {
            record.plaintext = try subscription.decryptor.decrypt(request.body)
        } catch {
            return Self.refusal(400, "DecryptionFailed: \(error)")
        }
        let kept = min(ttl, maxTTL)
        record.ttl = kept
        let message = "\(origin)/m/\(id)-\(UInt32.random(in: 0...UInt32.max))"
        return WebPushSandboxAnswer(status: 201, headers: [("location", message), ("ttl", String(kept))])
    }

    private static func refusal(_ status: Int, _ reason: String) -> WebPushSandboxAnswer {
        WebPushSandboxAnswer(status: status, headers: [("content-type", "application/json")], body: "{\"reason\":\(quoted(reason))}")
    }

    private static func reason(in body: String) -> String? {
        guard case let .object(members)? = try? JSONValue.parse(Array(body.utf8)) else { return nil }
        if case let .string(reason)? = members["reason"] { return reason }
        if case let .string(message)? = members["message"] { return message }
        return nil
    }

    private func control(_ request: WebPushSandboxRequest) -> WebPushSandboxAnswer {
        let route = String(request.path.dropFirst(Self.controlPrefix.count))
        func bad(_ message: String) -> WebPushSandboxAnswer { WebPushSandboxAnswer(status: 400, body: "{\"error\":\(Self.quoted(message))}") }
        let body = (try? JSONValue.parse(request.body)) ?? .null
        switch (request.method, route) {
        case ("POST", "subscriptions"):
            guard case let .object(members) = body, let count = members["count"]?.exactInteger, (1...100_000).contains(count) else {
                return bad("expected {\"count\": 1…100000, \"applicationServerKey\": optional base64url}")
            }
            var key: [UInt8]?
            if case let .string(text)? = members["applicationServerKey"] {
                guard let decoded = Base64.decode(text), decoded.count == 65 else { return bad("applicationServerKey must be 65 bytes of base64url") }
                key = decoded
            }
            let made = subscriptions.make(count: count, origin: origin, applicationServerKey: key)
            let items = made.map { #"{"id":"\#($0.id)","endpoint":"\#($0.endpoint)","keys":{"p256dh":"\#($0.p256dh)","auth":"\#($0.auth)"}}"# }
            return WebPushSandboxAnswer(status: 200, body: "[" + items.joined(separator: ",") + "]")
        case ("DELETE", _) where route.hasPrefix("subscriptions/"):
            subscriptions.unsubscribe(String(route.dropFirst("subscriptions/".count)))
            return WebPushSandboxAnswer(status: 200, body: "{}")
        case ("GET", "stats"):
            let counts = state.counts
            return WebPushSandboxAnswer(status: 200, body: "{\"requests\":\(counts.requests),\"accepted\":\(counts.accepted)}")
        case ("GET", "received"):
            return WebPushSandboxAnswer(status: 200, body: state.received.map(Self.line).joined())
        case ("PUT", "rules"):
            guard let rules = try? JSONDecoder().decode([WebPushSandboxRule].self, from: Data(request.body)),
                  rules.allSatisfy({ (100...599).contains($0.status) }) else {
                return bad("rules must be a JSON array of {idPrefix, status (100…599), reason, retryAfterSeconds, times}")
            }
            state.setRules(rules)
            return WebPushSandboxAnswer(status: 200, body: "{}")
        case ("POST", "revoke"):
            guard case let .object(members) = body, case let .string(text)? = members["publicKey"], let key = Base64.decode(text) else {
                return bad("expected {\"publicKey\": base64url}")
            }
            state.revoke(key)
            return WebPushSandboxAnswer(status: 200, body: "{}")
        case ("POST", "reset"):
            state.reset()
            return WebPushSandboxAnswer(status: 200, body: "{}")
        default:
            return WebPushSandboxAnswer(status: 404, body: "{\"error\":\"no such control endpoint\"}")
        }
    }

    private static func log(_ item: ReceivedWebPush) {
        let text = String(decoding: item.plaintext.prefix(80), as: UTF8.self)
        let line = "webpush sandbox: \(item.status) \(item.subscriptionID) ttl=\(item.ttl.map(String.init) ?? "-") urgency=\(item.urgency ?? "-") topic=\(item.topic ?? "-") \(item.status == 201 ? "message=\(text)" : "reason=\(item.reason ?? "-")")\n"
        // Unbuffered, so a demo or a CI log shows each message as it arrives.
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    static func line(_ item: ReceivedWebPush) -> String {
        let text = String(decoding: item.plaintext, as: UTF8.self)
        let fields = [
            "\"id\":\(quoted(item.subscriptionID))", "\"status\":\(item.status)", "\"reason\":\(item.reason.map(quoted) ?? "null")",
            "\"plaintext\":\(quoted(text))", "\"ttl\":\(item.ttl.map(String.init) ?? "null")",
            "\"urgency\":\(item.urgency.map(quoted) ?? "null")", "\"topic\":\(item.topic.map(quoted) ?? "null")",
            "\"subject\":\(item.subject.map(quoted) ?? "null")", "\"http\":\(quoted(item.httpVersion))",
            "\"at_ms\":\(item.receivedAtMilliseconds)",
        ]
        return "{" + fields.joined(separator: ",") + "}\n"
    }

    static func quoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }

    /// RFC 8030 §5.4: a topic uses the URL- and filename-safe Base64 alphabet.
    static func isTopicByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}
