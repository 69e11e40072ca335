import APNs
import APNsTokenSharing
import FCM
import WebPush
import Worker

/// The configuration's apps by platform, for what reads a platform's own settings (`config check`,
/// certificate expiry, the effective configuration's text): the worker itself reads none of them.
extension WorkerConfiguration {
    public var apnsApps: [String: APNsConfiguration] { apps.compactMapValues { $0 as? APNsConfiguration } }
    public var webPushApps: [String: WebPushConfiguration] { apps.compactMapValues { $0 as? WebPushConfiguration } }
    public var fcmApps: [String: FCMConfiguration] { apps.compactMapValues { $0 as? FCMConfiguration } }

    /// The APNs app of that name, to read or change; setting nil removes the app.
    public subscript(apns name: String) -> APNsConfiguration? {
        get { apps[name] as? APNsConfiguration }
        set { apps[name] = newValue }
    }

    /// How the APNs apps share provider tokens across the fleet: this Redis, this refresh period,
    /// this key prefix.
    public var providerTokenSharing: APNsProviderTokenStore.Settings {
        APNsProviderTokenStore.Settings(redis: redis, refresh: effectiveProviderTokenRefresh, keyPrefix: providerTokenKeyPrefix)
    }
}
