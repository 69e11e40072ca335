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
    /// The provider each Redis key's apps use now (the latest made, after a reload).
    private let running: NIOLockedValueBox<[String: SharedProviderToken]>
    /// Made at start, primed by `prime`.
    private let initial: [SharedProviderToken]
    /// Every provider made, for `run` to follow, at start and on reloads.
    private let started: AsyncStream<SharedProviderToken>
    private let startedInput: AsyncStream<SharedProviderToken>.Continuation

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
        (started, startedInput) = AsyncStream.makeStream(of: SharedProviderToken.self)
        running = NIOLockedValueBox([:])
        let (apps, made) = Self.merge(configuration.apps, running: [:], configuration: configuration) { provider, key in
            SharedProviderToken(provider: provider, key: key, refresh: refresh, redis: redis, logger: logger)
        }
        self.apps = apps
        initial = made
        register(made)
    }

    /// Before the first job: every provider holds the fleet's token or, Redis failing, its own.
    func prime() async {
        for token in initial { await token.prime() }
    }

    /// A reload's apps: a provider of a team, Key ID and key already running is replaced by the
    /// running one (its connections keep their token); the others are primed before they are
    /// returned, so a new connection starts with the fleet's token.
    func share(_ apps: [String: APNsConfiguration]) async -> [String: APNsConfiguration] {
        let refresh = configuration.effectiveProviderTokenRefresh, redis = redis, logger = logger
        let (merged, made) = Self.merge(apps, running: running.withLockedValue { $0 }, configuration: configuration) { provider, key in
            SharedProviderToken(provider: provider, key: key, refresh: refresh, redis: redis, logger: logger)
        }
        for token in made { await token.prime() }
        register(made)
        return merged
    }

    /// Until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await token in started { group.addTask { await token.run() } }
        }
    }

    private func register(_ tokens: [SharedProviderToken]) {
        running.withLockedValue { running in
            for token in tokens { running[token.key] = token }
        }
        for token in tokens { startedInput.yield(token) }
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
