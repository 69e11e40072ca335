import APNs
import Logging
import NIOConcurrencyHelpers
import Redis

/// Every provider token of this worker, one per (team ID, key ID): apps with the same team and
/// key are given one provider, so one token, and each provider follows the fleet's token in Redis.
final class ProviderTokenSharing: Sendable {
    /// The apps' configurations at start, with providers of the same team and key merged into one.
    let apps: [String: APNsConfiguration]
    private let configuration: WorkerConfiguration
    private let redis: RedisClient
    private let logger: Logger
    private let loops: NIOLockedValueBox<Loops>
    /// Made at start, primed by `prime`.
    private let initial: [SharedProviderToken]

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
    }

    /// A reload's providers, primed but not yet running (`commit` starts them): a reload that
    /// fails leaves nothing behind.
    struct Prepared {
        let apps: [String: APNsConfiguration]
        fileprivate let made: [SharedProviderToken]
    }

    init(configuration: WorkerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let refresh = configuration.effectiveProviderTokenRefresh
        var redisConfiguration = configuration.redis
        // Its own connection, off the group reads' queue, and quick to give up: a slow Redis
        // means this worker's own token, not a late one.
        let patience = min(.seconds(2), refresh / 4)
        redisConfiguration.connectTimeout = patience
        redisConfiguration.commandTimeout = patience
        let redis = RedisClient(configuration: redisConfiguration, logger: logger)
        self.redis = redis
        let (apps, made) = Self.merge(configuration.apps, running: [:], configuration: configuration) { provider, key in
            SharedProviderToken(provider: provider, key: key, refresh: refresh, redis: redis, logger: logger)
        }
        self.apps = apps
        initial = made
        var loops = Loops()
        for token in made { loops.tokens[token.key] = token }
        loops.keysInUse = Set(loops.tokens.keys)
        self.loops = NIOLockedValueBox(loops)
    }

    /// Before the first job: every provider holds the fleet's token or, Redis failing, its own.
    func prime() async {
        for token in initial { await token.prime() }
    }

    /// A reload's apps: a provider of a team, Key ID and key already running is replaced by the
    /// running one (its connections keep their token); the others are primed before they are
    /// returned, so a new connection starts with the fleet's token. Nothing runs until `commit`.
    func prepare(_ apps: [String: APNsConfiguration]) async -> Prepared {
        let refresh = configuration.effectiveProviderTokenRefresh, redis = redis, logger = logger
        let (merged, made) = Self.merge(apps, running: loops.withLockedValue { $0.tokens }, configuration: configuration) { provider, key in
            SharedProviderToken(provider: provider, key: key, refresh: refresh, redis: redis, logger: logger)
        }
        for token in made { await token.prime() }
        return Prepared(apps: merged, made: made)
    }

    /// The reload took effect: its providers run, and `allApps` (every APNs app of the new
    /// configuration, kept ones too) say which keys are still in use.
    func commit(_ prepared: Prepared, allApps: [String: APNsConfiguration]) {
        let keysInUse = Set(allApps.values.compactMap { app -> String? in
            guard case let .token(provider) = app.credentials else { return nil }
            return configuration.providerTokenKey(for: provider)
        })
        loops.withLockedValue { loops in
            for token in prepared.made {
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
    func retireUnused() -> Int {
        let stopped = loops.withLockedValue { loops in
            let unused = loops.tokens.keys.filter { !loops.keysInUse.contains($0) }
            for key in unused { loops.tokens[key] = nil }
            return unused.compactMap { loops.tasks.removeValue(forKey: $0) }
        }
        for task in stopped { task.cancel() }
        return stopped.count
    }

    /// How many keys have a loop running (for tests and the log).
    var runningLoops: Int { loops.withLockedValue { $0.tasks.count } }
    var runningKeys: [String] { loops.withLockedValue { Array($0.tasks.keys) } }

    /// Until cancelled: every provider's loop runs; on cancellation they all stop.
    func run() async {
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
    /// earlier in `apps`; `make` is called for the others, which are returned too.
    private static func merge(_ apps: [String: APNsConfiguration], running: [String: SharedProviderToken],
                              configuration: WorkerConfiguration,
                              make: (APNsTokenProvider, String) -> SharedProviderToken) -> ([String: APNsConfiguration], [SharedProviderToken]) {
        var known = running
        var made = [SharedProviderToken]()
        var merged = [String: APNsConfiguration]()
        for (name, app) in apps.sorted(by: { $0.key < $1.key }) {
            var app = app
            if case let .token(provider) = app.credentials {
                let key = configuration.providerTokenKey(for: provider)
                if let existing = known[key], existing.provider.hasSameKey(as: provider) {
                    app.credentials = .token(existing.provider)
                } else {
                    let token = make(provider, key)
                    known[key] = token
                    made.append(token)
                }
            }
            merged[name] = app
        }
        return (merged, made)
    }
}
