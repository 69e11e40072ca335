/// Whose fault a refused VAPID token is (401, 403, a 400 about the token): the app's (its key or
/// subject refused, which no device can cure, so the app pauses) or one subscription's. A
/// subscription's endpoint can be anyone's server answering 403 to everything, and the real
/// services refuse a subscription made with another `applicationServerKey`; so the app is blamed
/// only on evidence that one subscription, or a few, cannot give while the key works:
///
/// - `distinct` origins refused within `window` and no origin accepted a message in it, or
/// - a trusted push service (`WebPushServiceName`) refused `distinct` different subscriptions
///   within `window` and accepted none of this app's messages in it.
///
/// Any other refusal is the subscription's. It is `confirmed` when its service accepted this
/// app's messages within `window` (the key works there: the subscription is refused for itself),
/// and unconfirmed otherwise: the client lets such a device retry rather than fail, so that a key
/// refused everywhere costs devices attempts, not their messages, while the evidence gathers.
///
/// A trip lasts `window` (an acceptance from where the refusals came ends it sooner), and the
/// evidence it used is spent: devices held back on it are judged afresh when they come back, so a
/// few hostile subscriptions cannot hold an app paused for good; they use up their attempts.
/// A value that tests drive with their own instants; the client keeps one per app under a lock.
public struct WebPushRefusalJudge: Sendable {
    public enum Verdict: Sendable, Hashable {
        /// The app's key or subject is refused; the text says on what evidence.
        case app(evidence: String)
        case subscription(confirmed: Bool)
    }

    public static let distinct = 3
    /// Keys with evidence kept at most: a bound on memory when many origins refuse in a window.
    static let maximumKeys = 1024

    public let window: Duration
    private let trusted: [WebPushServiceName]

    private struct Refusal: Sendable {
        var at: ContinuousClock.Instant
        var subscription: String
    }

    private struct Trip: Sendable {
        var at: ContinuousClock.Instant
        var evidence: String
    }

    /// By evidence key (a trusted service's name, else the origin): the newest refusals of
    /// different subscriptions, at most `distinct`.
    private var refusals: [String: [Refusal]] = [:]
    private var acceptances: [String: ContinuousClock.Instant] = [:]
    private var lastAcceptance: ContinuousClock.Instant?
    /// By scope: a trusted service's name, or `anywhere` for the rule over origins.
    private var trips: [String: Trip] = [:]
    private static let anywhere = "*"

    public init(trusted: [WebPushServiceName] = WebPushServiceName.wellKnown, window: Duration = .seconds(60)) {
        self.trusted = trusted
        self.window = window
    }

    /// The key `origin`'s answers count under, and whether it is a trusted service.
    private func key(of origin: WebPushEndpointOrigin) -> (key: String, trusted: Bool) {
        if let service = trusted.first(where: { $0.matches(origin) }) { return (service.description, true) }
        return (origin.value, false)
    }

    private func recent(_ instant: ContinuousClock.Instant?, _ now: ContinuousClock.Instant) -> Bool {
        instant.map { now - $0 < window } ?? false
    }

    /// A message to `origin` was accepted: this app's key works there.
    public mutating func accepted(_ origin: WebPushEndpointOrigin, at now: ContinuousClock.Instant) {
        let key = key(of: origin).key
        acceptances[key] = now
        lastAcceptance = now
        trips[Self.anywhere] = nil
        trips[key] = nil
        refusals[key] = nil
        prune(now)
    }

    /// A message to `subscription` (its endpoint) at `origin` was refused for its VAPID token.
    public mutating func refused(_ origin: WebPushEndpointOrigin, subscription: String, at now: ContinuousClock.Instant) -> Verdict {
        let (key, isTrusted) = key(of: origin)
        for (scope, trip) in trips where now - trip.at >= window { trips[scope] = nil }
        if let trip = trips[Self.anywhere] ?? trips[key] { return .app(evidence: trip.evidence) }
        if recent(acceptances[key], now) { return .subscription(confirmed: true) }

        var list = (refusals[key] ?? []).filter { now - $0.at < window && $0.subscription != subscription }
        list.append(Refusal(at: now, subscription: subscription))
        refusals[key] = Array(list.suffix(Self.distinct))
        let seconds = window.components.seconds

        if isTrusted, list.count >= Self.distinct {
            let evidence = "\(key) refused \(list.count) subscriptions in \(seconds) s and accepted none"
            trips[key] = Trip(at: now, evidence: evidence)
            refusals[key] = nil
            return .app(evidence: evidence)
        }
        if !recent(lastAcceptance, now) {
            let refusing = refusals.filter { $0.value.contains { now - $0.at < window } }.keys.sorted()
            if refusing.count >= Self.distinct {
                let evidence = "\(refusing.count) push services (\(refusing.prefix(5).joined(separator: ", "))) refused messages in \(seconds) s and none accepted any"
                trips[Self.anywhere] = Trip(at: now, evidence: evidence)
                refusals = [:]
                return .app(evidence: evidence)
            }
        }
        prune(now)
        return .subscription(confirmed: false)
    }

    /// Forgets what no rule can use any more, once there is much of it.
    private mutating func prune(_ now: ContinuousClock.Instant) {
        if refusals.count > 64 {
            refusals = refusals.filter { $0.value.contains { now - $0.at < window } }
        }
        if acceptances.count > 64 {
            acceptances = acceptances.filter { now - $0.value < window }
        }
        while refusals.count > Self.maximumKeys, let oldest = refusals.min(by: { ($0.value.last?.at ?? now) < ($1.value.last?.at ?? now) }) {
            refusals[oldest.key] = nil
        }
        while acceptances.count > Self.maximumKeys, let oldest = acceptances.min(by: { $0.value < $1.value }) {
            acceptances[oldest.key] = nil
        }
    }
}
