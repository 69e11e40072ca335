import APNs
import Crypto
import Logging
import NIOConcurrencyHelpers
import PushTransport
import Redis

/// Every APNs provider token of this worker, one per (team ID, key ID, key): apps with the same
/// team and key are given one provider, so one token, and each provider follows the fleet's token
/// in Redis (`SharedProviderToken`). Apps of other platforms pass through unchanged.
public final class APNsProviderTokenStore: CredentialStore {
    /// How a worker shares its tokens: where, and how often they are renewed.
    public struct Settings: Sendable {
        public var redis: RedisConfiguration
        /// How long one token is used across the fleet before the next is minted.
        public var refresh: Duration
        /// A team and key's token lives at `<prefix><team id>:<key id>:<key fingerprint>`.
        public var keyPrefix: String

        public init(redis: RedisConfiguration, refresh: Duration, keyPrefix: String = "pushworker:jwt:") {
            self.redis = redis
            self.refresh = refresh
            self.keyPrefix = keyPrefix
        }
    }

    private let settings: Settings
    private let redis: RedisClient
    private let logger: Logger
    private let loops: NIOLockedValueBox<Loops>

    /// Each Redis key's provider and the loop that keeps it in step with the fleet.
    private struct Loops {
        /// The provider each Redis key's apps use now (the latest made, after a reload).
        var tokens: [String: SharedProviderToken] = [:]
        /// The running loops, by key: started by `run`, or by a reload after it.
        var tasks: [String: Task<Void, Never>] = [:]
        /// The keys the latest configuration's apps use: a key that left it loses its loop once
        /// the jobs that began with it have settled (`retireUnused`).
        var keysInUse: Set<String> = []
        var running = false
        /// Adopted at start, primed by `prime`.
        var unprimed: [SharedProviderToken] = []
    }

    public init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        let refresh = settings.refresh
        var redisConfiguration = settings.redis
        // Its own connection, off the group reads' queue, and quick to give up: a slow Redis
        // means this worker's own token, not a late one.
        let patience = min(.seconds(2), refresh / 4)
        redisConfiguration.connectTimeout = patience
        redisConfiguration.commandTimeout = patience
        self.redis = RedisClient(configuration: redisConfiguration, logger: logger)
        self.loops = NIOLockedValueBox(Loops())
    }

    /// The Redis key of a team and key's token. The fingerprint (16 hex digits of the SHA-256 of
    /// the public key) keeps a token signed with another key of the same Key ID (a regenerated
    /// sandbox key) from being taken for this key's.
    public static func key(for provider: APNsTokenProvider, prefix: String) -> String {
        // The key followed by a NUL, as every release has hashed it: workers of two releases
        // share one key during a rolling upgrade.
        var hasher = SHA256()
        hasher.update(data: provider.publicKey)
        hasher.update(data: [UInt8(0)])
        let fingerprint = hasher.finalize().prefix(8).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
        return "\(prefix)\(provider.teamID):\(provider.keyID):\(fingerprint)"
    }

    /// At start: apps of one team and key share one provider; `prime` fetches its token.
    public func adopt(_ apps: [String: any AppDefinition]) -> [String: any AppDefinition] {
        let (merged, made) = merge(apps, running: [:])
        loops.withLockedValue { loops in
            for token in made { loops.tokens[token.key] = token }
            loops.keysInUse = Set(loops.tokens.keys)
            loops.unprimed = made
        }
        return merged
    }

    /// Before the first job: every provider holds the fleet's token or, Redis failing, its own.
    public func prime() async {
        let unprimed = loops.withLockedValue { loops in
            defer { loops.unprimed = [] }
            return loops.unprimed
        }
        for token in unprimed { await token.prime() }
    }

    /// A reload's apps: a provider of a team, Key ID and key already running is replaced by the
    /// running one (its connections keep their token); the others are primed before they are
    /// returned, so a new connection starts with the fleet's token. Nothing runs until `commit`.
    public func prepare(_ apps: [String: any AppDefinition]) async -> PreparedCredentials {
        let (merged, made) = merge(apps, running: loops.withLockedValue { $0.tokens })
        for token in made { await token.prime() }
        return PreparedCredentials(apps: merged, made: made)
    }

    /// The reload took effect: its providers run, and `allApps` (every app of the new
    /// configuration, kept ones too) say which keys are still in use.
    public func commit(_ prepared: PreparedCredentials, allApps: [String: any AppDefinition]) {
        let keysInUse = Set(allApps.values.compactMap { app -> String? in
            guard let apns = app as? APNsConfiguration, case let .token(provider) = apns.credentials else { return nil }
            return Self.key(for: provider, prefix: settings.keyPrefix)
        })
        let made = prepared.made as? [SharedProviderToken] ?? []
        loops.withLockedValue { loops in
            for token in made {
                loops.tokens[token.key] = token
                if loops.running { Self.start(token, in: &loops) }
            }
            loops.keysInUse = keysInUse
        }
    }

    /// Stops the loops of keys the latest configuration no longer uses (after a reload, once the
    /// jobs that began before it settled): a key taken out of the file is not minted and written
    /// to Redis any more. Returns how many stopped.
    @discardableResult
    public func retireUnused() -> Int {
        let stopped = loops.withLockedValue { loops in
            let unused = loops.tokens.keys.filter { !loops.keysInUse.contains($0) }
            for key in unused { loops.tokens[key] = nil }
            return unused.compactMap { loops.tasks.removeValue(forKey: $0) }
        }
        for task in stopped { task.cancel() }
        return stopped.count
    }

    /// How many keys have a loop running (for tests and the log).
    public var runningLoops: Int { loops.withLockedValue { $0.tasks.count } }
    public var runningKeys: [String] { loops.withLockedValue { Array($0.tasks.keys) } }

    /// Until cancelled: every provider's loop runs; on cancellation they all stop.
    public func run() async {
        loops.withLockedValue { loops in
            loops.running = true
            for token in loops.tokens.values where loops.tasks[token.key] == nil { Self.start(token, in: &loops) }
        }
        let (cancelled, open) = AsyncStream.makeStream(of: Never.self)
        // Ends when this task is cancelled (nothing is ever yielded; `open` keeps it from finishing).
        for await _ in cancelled {}
        open.finish()
        let tasks = loops.withLockedValue { loops in
            loops.running = false
            defer { loops.tasks = [:] }
            return Array(loops.tasks.values)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    private static func start(_ token: SharedProviderToken, in loops: inout Loops) {
        loops.tasks[token.key]?.cancel()
        loops.tasks[token.key] = Task { await token.run() }
    }

    /// `apps` with each token provider replaced by one of the same key from `running` or made
    /// earlier in `apps`; the ones made for the others are returned too.
    private func merge(_ apps: [String: any AppDefinition],
                       running: [String: SharedProviderToken]) -> ([String: any AppDefinition], [SharedProviderToken]) {
        var known = running
        var made = [SharedProviderToken]()
        var merged = [String: any AppDefinition]()
        for (name, app) in apps.sorted(by: { $0.key < $1.key }) {
            guard var apns = app as? APNsConfiguration, case let .token(provider) = apns.credentials else {
                merged[name] = app
                continue
            }
            let key = Self.key(for: provider, prefix: settings.keyPrefix)
            if let existing = known[key], existing.provider.hasSameKey(as: provider) {
                apns.credentials = .token(existing.provider)
            } else {
                let token = SharedProviderToken(provider: provider, key: key, refresh: settings.refresh, redis: redis, logger: logger)
                known[key] = token
                made.append(token)
            }
            merged[name] = apns
        }
        return (merged, made)
    }
}
