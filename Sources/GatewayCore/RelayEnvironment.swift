/// The APNs environment a relay URL names (`/relay-to/<environment>/…`, toot-relay's README):
/// which app the job goes to, since a development token is unknown to production and back.
public enum RelayEnvironment: String, Sendable, Hashable, CaseIterable {
    case development
    case production
}
