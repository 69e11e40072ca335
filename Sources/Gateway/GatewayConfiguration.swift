import GatewayCore
import NIOConcurrencyHelpers
import Redis

/// What a reload (SIGHUP) replaces: the apps, API keys, relay apps and limits. A request reads it
/// once when it begins and finishes with it, so a reload never changes the rules under a request
/// in progress.
struct GatewayConfiguration: Sendable {
    let settings: GatewaySettings
    let keyring: APIKeyring
    let jobs: JobIntake
    let groups: GroupIntake
    let relayAdmission: NIOLockedValueBox<RelayAdmission>

    /// - Parameter previous: the configuration this one replaces: buckets whose limits did not
    ///   change are kept, so that a reload hands out no fresh bursts.
    init(settings: GatewaySettings, redis: RedisClient, now: Duration, carrying previous: GatewayConfiguration? = nil) {
        self.settings = settings
        keyring = APIKeyring(settings.apiKeys, defaultRate: settings.defaultRequestsPerSecond, defaultBurst: settings.defaultBurst,
                             now: now, carrying: previous?.keyring)
        jobs = JobIntake(apps: settings.apps)
        groups = GroupIntake(redis: redis, apps: settings.apps, keyPrefix: settings.groupKeyPrefix)
        if let previous, previous.settings.relayLimits == settings.relayLimits {
            relayAdmission = previous.relayAdmission
        } else {
            relayAdmission = NIOLockedValueBox(RelayAdmission(limits: settings.relayLimits))
        }
    }

    /// The app relayed posts to an environment go to.
    func relayApp(for environment: RelayEnvironment) -> String {
        environment == .production ? settings.relayProductionApp : settings.relayDevelopmentApp
    }
}
