/// What the FCM mode adds to `SandboxConfiguration`: the Firebase project it pretends to be, the
/// service account it generates, and how long its access tokens live.
public struct FCMSandboxConfiguration: Sendable {
    public var projectID = "pushworker-sandbox"
    public var clientEmail = "pushworker@pushworker-sandbox.iam.gserviceaccount.com"
    /// Google's tokens live an hour; shorter ones let tests see a refresh.
    public var tokenLifetime: Duration = .seconds(3600)
    /// The `Retry-After` sent with a scripted QUOTA_EXCEEDED (429) or UNAVAILABLE (503).
    public var retryAfterSeconds = 60

    public init() {}
}
