import PushCore

/// What one answer says about the app's configuration, as the platform reads it. The worker's
/// breaker counts `.mismatch` answers over a window: many tokens "not fitting" at once is a wrong
/// environment, topic or project, not that many dead devices.
public enum ConfigurationFit: Sendable, Hashable {
    /// No answer, or one that says nothing about the configuration.
    case unknown
    /// The answer fits the configuration (accepted, or refused for the device's own reasons).
    case fits
    /// The token does not fit the credentials: one dead device, or a configuration mistake if
    /// many say so. For the message once the breaker trips: `suspect` is what may be wrong and
    /// what the platform answered ("environment or topic mismatch? APNs answered BadDeviceToken"),
    /// `check` the settings to look at.
    case mismatch(suspect: String, check: String)
    /// Only the configuration can cause this answer: a credentials problem at once.
    case misconfigured(reason: String)
}
