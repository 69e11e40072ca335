import PushCore
import PushTransport

/// One app as the worker serves it: its way to the platform, its configuration breaker, and the
/// settings a job of it needs after the platform answered.
struct ServedApp: Sendable {
    let transport: any PushTransport
    /// How the app's jobs and group members read (its platform's).
    let rules: any PlatformJobRules
    let breaker = ConfigurationBreaker()
    /// `prune_invalid_tokens`: a token the platform calls invalid leaves the job's groups.
    let pruneInvalidTokens: Bool
    let metrics: AppMetrics
}
