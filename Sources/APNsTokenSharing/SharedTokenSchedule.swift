/// Decides, for one (team ID, key ID), which provider token this worker uses and when it next asks
/// Redis about the fleet's token. A value driven by events with the time passed in, so tests go
/// through an hour of refreshes and outages without Redis or a clock.
///
/// The fleet's token lives in one Redis key whose value is `<iat>.<jwt>` and whose expiry is the
/// refresh period: once it expires, the first worker to notice mints a token and creates the key
/// with `SET NX PX`; the others lose that race and read the winner's token. So APNs sees one new
/// token per refresh period per team, however many workers run.
public struct SharedTokenSchedule: Sendable {
    /// A provider token and the time it was issued (its JWT `iat`, Unix seconds).
    public struct Token: Sendable, Hashable {
        public var issuedAt: Int
        public var jwt: String

        public init(issuedAt: Int, jwt: String) {
            self.issuedAt = issuedAt
            self.jwt = jwt
        }

        /// The value kept in Redis: the issue time first, so a reader needs no JWT decoding.
        public var stored: String { "\(issuedAt).\(jwt)" }

        /// nil for a value this worker did not write (someone else's key, a hand-made value).
        public init?(stored: String) {
            guard let dot = stored.firstIndex(of: "."), let issuedAt = Int(stored[..<dot]) else { return nil }
            let jwt = stored[stored.index(after: dot)...]
            guard jwt.split(separator: ".", omittingEmptySubsequences: false).count == 3 else { return nil }
            self.init(issuedAt: issuedAt, jwt: String(jwt))
        }
    }

    public enum Origin: Sendable, Hashable {
        /// The fleet's token, from Redis.
        case shared
        /// Minted by this worker alone because Redis did not answer.
        case local
    }

    /// What happened: the wake-up time came, or Redis answered.
    public enum Event: Sendable, Hashable {
        case due
        /// GET answered: the stored token, nil when the key does not exist.
        case found(Token?)
        /// SET NX created the key with this token.
        case created(Token)
        /// SET NX found the key already there: another worker created it first.
        case lostCreation
        /// Redis failed or did not answer in time.
        case redisFailed(reason: String)
        /// GET answered with a value APNs would refuse from this key (`reason`): garbage, another
        /// key's token, a forged one, or one issued in the future by a clock ahead of ours.
        case foundUnusable(reason: String)
        /// The token minted after `.useLocal`.
        case mintedLocally(Token)
    }

    public enum Action: Sendable, Hashable {
        /// GET the key.
        case read
        /// Mint a token and `SET key value NX PX <refresh period>`.
        case create
        /// Mint a token and `SET key value PX <refresh period>` over the unusable value; reported
        /// with `.created`.
        case overwrite
        /// Log, at warning, that the stored value was replaced and why.
        case warnReplaced(reason: String)
        /// Mint a token for this worker alone and report it with `.mintedLocally`.
        case useLocal
        /// Hand this token to the connections.
        case use(Token)
        /// Warn, once per outage, that the token is this worker's own.
        case warnFallback(reason: String)
        /// Redis answers again and the fleet's token is back in use.
        case noteRejoined
    }

    public let refreshMilliseconds: Int64
    /// How soon to ask again while the fleet's next token is not there yet.
    public let retryMilliseconds: Int64
    /// A stored token older than this means its key does not expire as it should.
    public let staleMilliseconds: Int64
    public private(set) var current: (token: Token, origin: Origin)?
    /// Wall-clock milliseconds when `.due` next makes sense.
    public private(set) var nextDueMilliseconds: Int64 = 0
    /// Whether the fallback was warned about and not yet followed by the shared token.
    public private(set) var fallingBack = false

    /// APNs refuses tokens older than an hour; a stale shared one is dropped well before that.
    static let stalenessCeilingMilliseconds: Int64 = 55 * 60 * 1000

    public init(refresh: Duration) {
        let refresh = max(Self.milliseconds(refresh), 1000)
        refreshMilliseconds = refresh
        // A fraction of the period: the fleet changes tokens within a moment of each other, while a
        // 40-minute period still asks Redis only every few seconds during the change.
        retryMilliseconds = min(max(refresh / 40, 100), 5000)
        staleMilliseconds = min(refresh + max(refresh / 4, 5000), Self.stalenessCeilingMilliseconds)
    }

    /// The actions to take for `event` at wall-clock time `now` (Unix milliseconds), in order.
    public mutating func handle(_ event: Event, now: Int64) -> [Action] {
        switch event {
        case .due:
            return now >= nextDueMilliseconds ? [.read] : []
        case .found(nil):
            // Asked again later should the creation not happen (no token could be signed).
            nextDueMilliseconds = now + retryMilliseconds
            return [.create]
        case let .found(token?):
            let age = Self.age(of: token, now: now)
            if token != current?.token, age < refreshMilliseconds {
                return adopt(token, now: now)
            }
            if age >= staleMilliseconds {
                return fallBack(reason: "the token in Redis is \(age / 1000) s old: its key does not expire", now: now)
            }
            // Ours, or one about to expire: the key goes at the end of the period, ask again then.
            nextDueMilliseconds = now + retryMilliseconds
            return []
        case let .created(token):
            return adopt(token, now: now)
        case .lostCreation:
            nextDueMilliseconds = now + retryMilliseconds
            return [.read]
        case let .foundUnusable(reason):
            // Never adopted: every worker would stop sending for the key's whole life. Ours goes
            // over it; a worker that wrote it from a clock ahead reads ours next and adopts it.
            nextDueMilliseconds = now + retryMilliseconds
            return [.warnReplaced(reason: reason), .overwrite]
        case let .redisFailed(reason):
            return fallBack(reason: reason, now: now)
        case let .mintedLocally(token):
            current = (token, .local)
            nextDueMilliseconds = dueTime(after: token, now: now)
            return [.use(token)]
        }
    }

    private mutating func adopt(_ token: Token, now: Int64) -> [Action] {
        let rejoined = fallingBack
        fallingBack = false
        current = (token, .shared)
        nextDueMilliseconds = dueTime(after: token, now: now)
        return rejoined ? [.use(token), .noteRejoined] : [.use(token)]
    }

    /// Redis is unusable: keep the token in use while it is younger than the period (Redis may be
    /// back by then), else this worker mints its own.
    private mutating func fallBack(reason: String, now: Int64) -> [Action] {
        if let current, Self.age(of: current.token, now: now) < refreshMilliseconds {
            nextDueMilliseconds = dueTime(after: current.token, now: now)
            return []
        }
        var actions = [Action]()
        if !fallingBack { actions.append(.warnFallback(reason: reason)) }
        fallingBack = true
        // Until the minted token is reported, asking again is pointless.
        nextDueMilliseconds = now + refreshMilliseconds
        actions.append(.useLocal)
        return actions
    }

    /// The end of the token's period, but not before a retry's worth from now (a token from a
    /// clock behind ours would otherwise be due at once) and not later than a period from now.
    private func dueTime(after token: Token, now: Int64) -> Int64 {
        let end = token.issuedAt.multipliedReportingOverflow(by: 1000)
        let due = end.overflow ? now : Int64(end.partialValue) &+ refreshMilliseconds
        return min(max(due, now + retryMilliseconds), now + refreshMilliseconds)
    }

    /// Milliseconds since `iat`; negative for a token from a clock ahead of ours.
    static func age(of token: Token, now: Int64) -> Int64 {
        let issued = Int64(token.issuedAt).multipliedReportingOverflow(by: 1000)
        return issued.overflow ? .max : now &- issued.partialValue
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1000 &+ attoseconds / 1_000_000_000_000_000
    }
}
