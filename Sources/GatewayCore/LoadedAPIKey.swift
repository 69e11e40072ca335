/// A key with its secret read, ready to compare with what a request presents.
public struct LoadedAPIKey: Sendable {
    public var name: String
    public var secret: String
    public var apps: Set<String>?
    public var requestsPerSecond: Int?
    public var burst: Int?

    public init(name: String, secret: String, apps: Set<String>?, requestsPerSecond: Int? = nil, burst: Int? = nil) {
        self.name = name
        self.secret = secret
        self.apps = apps
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }
}
