import NIOConcurrencyHelpers

/// A validated request waiting for the recorder's verdict (rules may still change its answer).
struct SandboxDraft: Sendable {
    var token = ""
    /// The `apns-channel-id` of a broadcast ("" when it sent none); nil for a device push.
    var channelID: String?
    var topic = ""
    var pushType = ""
    var priority = 10
    var expiration: Int?
    var collapseID: String?
    var apnsID = ""
    var payload: [UInt8] = []
    var authentication = "none"
    /// The provider token (JWT) and its team when one was accepted.
    var providerToken: String?
    var teamID: String?
    var status = 200
    var reason: String?
    var connectionID = 0
    var receivedAt = ContinuousClock.now

    /// Keeps the provider token (and its team) the request was just accepted with.
    mutating func recordAcceptedToken(_ tokens: ProviderTokenCache) {
        guard let accepted = tokens.acceptedToken else { return }
        self.providerToken = accepted.jwt
        self.teamID = accepted.teamID
    }
}

/// What the connection does with a complete request.
enum SandboxAdmission: Sendable {
    case answer(status: Int, reason: String?, latency: Duration, goAway: Bool)
    case reset
    case stall
}

/// The state every connection shares: the record, counters, rules and faults. One lock acquisition
/// per request (`admit`) decides faults and rules and records the answer together, so the hot path
/// never takes a second lock.
final class SandboxRecorder: Sendable {
    private struct State {
        var record: NotificationRing
        var statistics = SandboxStatistics()
        var rules: [SandboxRule]
        var ruleUses: [Int]
        var faults: SandboxFaults
        var nextConnectionID = 1
    }

    private let state: NIOLockedValueBox<State>

    init(rules: [SandboxRule], faults: SandboxFaults, recordLimit: Int) {
        self.state = NIOLockedValueBox(State(
            record: NotificationRing(limit: recordLimit),
            rules: rules,
            ruleUses: Array(repeating: 0, count: rules.count),
            faults: faults
        ))
    }

    /// `requestNumber` is 1-based per connection; `draining` connections never send a second GOAWAY.
    func admit(_ draft: SandboxDraft, requestNumber: Int, draining: Bool) -> SandboxAdmission {
        let now = SandboxWallClock.epochMilliseconds()
        return self.state.withLockedValue { state in
            state.statistics.requests += 1
            if state.statistics.firstRequestAtMilliseconds == 0 { state.statistics.firstRequestAtMilliseconds = now }
            state.statistics.lastRequestAtMilliseconds = now
            let faults = state.faults
            if Self.isEvery(faults.resetEveryRequests, requestNumber) {
                state.statistics.resets += 1
                return .reset
            }
            if Self.isEvery(faults.stallEveryRequests, requestNumber) {
                state.statistics.stalls += 1
                return .stall
            }
            var status = draft.status
            var reason = draft.reason
            if status == 200 {
                for index in state.rules.indices where state.rules[index].matches(token: draft.token, topic: draft.topic, channel: draft.channelID) {
                    if let times = state.rules[index].times, state.ruleUses[index] >= times { continue }
                    state.ruleUses[index] += 1
                    status = state.rules[index].status
                    reason = state.rules[index].reason
                    break
                }
            }
            if status == 200 { state.statistics.accepted += 1 } else { state.statistics.rejected += 1 }
            state.record.append(ReceivedNotification(
                token: draft.token, topic: draft.topic, pushType: draft.pushType, priority: draft.priority,
                expiration: draft.expiration, collapseID: draft.collapseID, apnsID: draft.apnsID,
                payload: draft.payload, authentication: draft.authentication, status: status, reason: reason,
                connectionID: draft.connectionID, receivedAt: draft.receivedAt, receivedAtMilliseconds: now,
                providerToken: draft.providerToken, teamID: draft.teamID, channelID: draft.channelID
            ))
            let goAway = !draining && Self.isEvery(faults.goAwayEveryRequests, requestNumber)
            if goAway { state.statistics.goAwaysSent += 1 }
            return .answer(status: status, reason: reason, latency: faults.latency, goAway: goAway)
        }
    }

    private static func isEvery(_ period: Int?, _ number: Int) -> Bool {
        guard let period, period > 0 else { return false }
        return number % period == 0
    }

    func connectionAccepted() -> Int {
        self.state.withLockedValue { state in
            state.statistics.connectionsAccepted += 1
            defer { state.nextConnectionID += 1 }
            return state.nextConnectionID
        }
    }

    /// Called only when a connection's own peak grows, so it stays off the per-request path.
    func noteConcurrentStreams(_ count: Int) {
        self.state.withLockedValue { $0.statistics.maxConcurrentStreamsSeen = max($0.statistics.maxConcurrentStreamsSeen, count) }
    }

    func noteStreamLimitViolation() {
        self.state.withLockedValue { $0.statistics.streamLimitViolations += 1 }
    }

    func received() -> [ReceivedNotification] {
        self.state.withLockedValue { $0.record.ordered }
    }

    func statistics() -> SandboxStatistics {
        self.state.withLockedValue { $0.statistics }
    }

    func setRules(_ rules: [SandboxRule]) {
        self.state.withLockedValue { state in
            state.rules = rules
            state.ruleUses = Array(repeating: 0, count: rules.count)
        }
    }

    func setFaults(_ faults: SandboxFaults) {
        self.state.withLockedValue { $0.faults = faults }
    }

    /// Clears the record, counters and rule counters; connection IDs stay unique.
    func reset() {
        self.state.withLockedValue { state in
            state.record.removeAll()
            state.statistics = SandboxStatistics()
            state.ruleUses = Array(repeating: 0, count: state.rules.count)
        }
    }
}
