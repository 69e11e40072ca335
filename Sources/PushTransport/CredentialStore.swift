/// Credentials the apps of a fleet share, kept in step across the workers (APNs provider tokens
/// in Redis: one token per team and key for every worker). The executable provides it; the worker
/// only drives its life: adopt at start, prime before the first job, run, and the two steps of a
/// reload, so that a reload that fails leaves nothing running.
public protocol CredentialStore: Sendable {
    /// At start: `apps`, each app whose credential another app (or a running one) has given that
    /// one, so that they share it. Nothing is fetched yet (`prime`).
    func adopt(_ apps: [String: any AppDefinition]) -> [String: any AppDefinition]
    /// Before the first job: every credential adopted at start holds the fleet's value.
    func prime() async
    /// Until cancelled: keeps every credential in step with the fleet.
    func run() async
    /// A reload's apps, as `adopt` gives them, with their new credentials primed but not running.
    func prepare(_ apps: [String: any AppDefinition]) async -> PreparedCredentials
    /// The reload took effect: its credentials run. `allApps` (the whole new configuration, kept
    /// apps too) says which are still in use.
    func commit(_ prepared: PreparedCredentials, allApps: [String: any AppDefinition])
    /// Stops keeping credentials no app of the latest configuration uses (once the jobs begun
    /// before a reload settled). Returns how many stopped.
    @discardableResult
    func retireUnused() -> Int
}

/// A reload's apps and the credentials made for them, not yet running.
public struct PreparedCredentials: Sendable {
    public let apps: [String: any AppDefinition]
    /// The store's own record of what it made, handed back to it by `commit`.
    public let made: any Sendable

    public init(apps: [String: any AppDefinition], made: any Sendable) {
        self.apps = apps
        self.made = made
    }
}

/// For a worker whose apps share nothing across the fleet: each app keeps its own credentials.
public struct UnsharedCredentials: CredentialStore {
    public init() {}
    public func adopt(_ apps: [String: any AppDefinition]) -> [String: any AppDefinition] { apps }
    public func prime() async {}
    public func run() async {}
    public func prepare(_ apps: [String: any AppDefinition]) async -> PreparedCredentials { PreparedCredentials(apps: apps, made: ()) }
    public func commit(_ prepared: PreparedCredentials, allApps: [String: any AppDefinition]) {}
    public func retireUnused() -> Int { 0 }
}
