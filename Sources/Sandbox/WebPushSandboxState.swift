import NIOConcurrencyHelpers

/// A scripted answer of the Web Push sandbox: requests to subscriptions whose id starts with
/// `idPrefix` get `status` (with `reason` in the body and `Retry-After` when given), `times`
/// times (nil: always), after their VAPID token checked out.
public struct WebPushSandboxRule: Sendable, Codable, Hashable {
    public var idPrefix: String
    public var status: Int
    public var reason: String?
    public var retryAfterSeconds: Int?
    public var times: Int?

    public init(idPrefix: String = "", status: Int, reason: String? = nil, retryAfterSeconds: Int? = nil, times: Int? = nil) {
        self.idPrefix = idPrefix
        self.status = status
        self.reason = reason
        self.retryAfterSeconds = retryAfterSeconds
        self.times = times
    }
}

/// One request the Web Push sandbox answered, with the message as the browser would read it.
public struct ReceivedWebPush: Sendable, Hashable {
    public let subscriptionID: String
    public let status: Int
    public let reason: String?
    /// The decrypted message (empty unless accepted).
    public let plaintext: [UInt8]
    public let ttl: Int?
    public let urgency: String?
    public let topic: String?
    /// The VAPID `sub` and public key (base64url) the request was signed with.
    public let subject: String?
    public let vapidKey: String?
    /// HTTP/2 or HTTP/1.1: how the sender came.
    public let httpVersion: String
    /// When it was answered, by the wall clock (ms since 1970).
    public let receivedAtMilliseconds: Int64
}

/// Records, rules and refused VAPID keys, shared by every connection.
final class WebPushSandboxState: Sendable {
    private struct State {
        var rules: [WebPushSandboxRule] = []
        var used: [Int] = []
        var revokedKeys: Set<[UInt8]> = []
        var received: [ReceivedWebPush] = []
        var accepted = 0
        var requests = 0
    }

    private let state = NIOLockedValueBox(State())
    let recordLimit: Int

    init(recordLimit: Int) {
        self.recordLimit = recordLimit
    }

    func setRules(_ rules: [WebPushSandboxRule]) {
        state.withLockedValue { state in
            state.rules = rules
            state.used = Array(repeating: 0, count: rules.count)
        }
    }

    /// The first rule for `id` that has uses left, counting this use.
    func rule(for id: String) -> WebPushSandboxRule? {
        state.withLockedValue { state in
            for (index, rule) in state.rules.enumerated() where id.hasPrefix(rule.idPrefix) {
                if let times = rule.times, state.used[index] >= times { continue }
                state.used[index] += 1
                return rule
            }
            return nil
        }
    }

    /// Messages signed with this VAPID key are refused from now on (403), as after a key is revoked.
    func revoke(_ publicKey: [UInt8]) {
        _ = state.withLockedValue { $0.revokedKeys.insert(publicKey) }
    }

    func reinstate(_ publicKey: [UInt8]) {
        _ = state.withLockedValue { $0.revokedKeys.remove(publicKey) }
    }

    func isRevoked(_ publicKey: [UInt8]) -> Bool {
        state.withLockedValue { $0.revokedKeys.contains(publicKey) }
    }

    func record(_ item: ReceivedWebPush) {
        state.withLockedValue { state in
            state.requests += 1
            if item.status == 201 { state.accepted += 1 }
            if state.received.count < recordLimit { state.received.append(item) }
        }
    }

    var received: [ReceivedWebPush] { state.withLockedValue { $0.received } }
    var counts: (requests: Int, accepted: Int) { state.withLockedValue { ($0.requests, $0.accepted) } }

    func reset() {
        state.withLockedValue { state in
            state.received = []
            state.accepted = 0
            state.requests = 0
            state.used = Array(repeating: 0, count: state.rules.count)
        }
    }
}
