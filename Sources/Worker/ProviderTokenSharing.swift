import APNs
import Logging
import Redis

/// Every provider token of this worker, one per (team ID, key ID): apps with the same team and
/// key are given one provider, so one token, and each provider follows the fleet's token in Redis.
final class ProviderTokenSharing: Sendable {
    /// The apps' configurations with providers of the same team and key merged into one.
    let apps: [String: APNsConfiguration]
    private let tokens: [SharedProviderToken]

    init(configuration: WorkerConfiguration, logger: Logger) {
        var providers = [String: APNsTokenProvider]()
        var apps = [String: APNsConfiguration]()
        for (name, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            var app = app
            if case let .token(provider) = app.credentials {
                let key = configuration.providerTokenKey(teamID: provider.teamID, keyID: provider.keyID)
                if let first = providers[key] { app.credentials = .token(first) } else { providers[key] = provider }
            }
            apps[name] = app
        }
        self.apps = apps
        let refresh = configuration.effectiveProviderTokenRefresh
        var redisConfiguration = configuration.redis
        // Its own connection, off the group reads' queue, and quick to give up: a slow Redis
        // means this worker's own token, not a late one.
        let patience = min(.seconds(2), refresh / 4)
        redisConfiguration.connectTimeout = patience
        redisConfiguration.commandTimeout = patience
        let redis = RedisClient(configuration: redisConfiguration, logger: logger)
        tokens = providers.sorted(by: { $0.key < $1.key }).map { key, provider in
            SharedProviderToken(provider: provider, key: key, refresh: refresh, redis: redis, logger: logger)
        }
    }

    /// Before the first job: every provider holds the fleet's token or, Redis failing, its own.
    func prime() async {
        for token in tokens { await token.prime() }
    }

    /// Until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            for token in tokens { group.addTask { await token.run() } }
        }
    }
}
