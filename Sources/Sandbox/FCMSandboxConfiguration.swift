/// What the FCM mode adds to `SandboxConfiguration`: the Firebase project it pretends to be, the
/// service account it generates, and how long its access tokens live.
public struct FCMSandboxConfiguration: Sendable {
    public var projectID = "pushworker-sandbox"
    public var clientEmail = "pushworker@pushworker-sandbox.iam.gserviceaccount.com"
    /// Google's tokens live an hour; shorter ones let tests see a refresh.
    public var tokenLifetime: Duration = .seconds(3600)
    /// The `Retry-After` sent with a scripted QUOTA_EXCEEDED (429) or UNAVAILABLE (503).
    public var retryAfterSeconds = 60
    /// How far the token endpoint's clock is ahead of this machine's (behind when negative): it
    /// checks an assertion's `iat` and `exp` and dates its answers (`Date`) by it, as Google's
    /// endpoint does by its own. An hour makes every client here look an hour off.
    public var clockOffset: Duration = .zero

    public init() {}
}
