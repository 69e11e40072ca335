import GatewayCore
import NIOConcurrencyHelpers
import Redis

/// What requests are checked against: the apps, API keys, relay apps and limits.
struct GatewayConfiguration: Sendable {
    let settings: GatewaySettings
    let keyring: APIKeyring
    let jobs: JobIntake
    let groups: GroupIntake
    let relayAdmission: NIOLockedValueBox<RelayAdmission>

    init(settings: GatewaySettings, redis: RedisClient, now: Duration) {
        self.settings = settings
        keyring = APIKeyring(settings.apiKeys, defaultRate: settings.defaultRequestsPerSecond, defaultBurst: settings.defaultBurst,
                             now: now)
        jobs = JobIntake(apps: settings.apps)
        groups = GroupIntake(redis: redis, apps: settings.apps, keyPrefix: settings.groupKeyPrefix)
        relayAdmission = NIOLockedValueBox(RelayAdmission(limits: settings.relayLimits))
    }

    /// The app relayed posts to an environment go to.
    func relayApp(for environment: RelayEnvironment) -> String {
        environment == .production ? settings.relayProductionApp : settings.relayDevelopmentApp
    }
}
