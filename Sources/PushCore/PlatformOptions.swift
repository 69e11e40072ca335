/// The fields of a job that belong to one push platform (for APNs: push type, priority, collapse
/// id, topic). The shared job model carries them without knowing them: the platform's module
/// makes them (its `PlatformJobRules`) and reads them (APNsCore's `PushJob.apns`).
public protocol PlatformOptions: Sendable {
    /// The platform that made them, as its `PlatformJobRules.platformName`: a job is sent only by
    /// an app of that platform (a reload may change an app's platform while its jobs are in flight).
    var platformName: String { get }
    /// Writes the options back as the job fields they were read from (`PushJob.encoded()`).
    func write(into writer: inout JSONWriter)
    /// Equality across platforms: false unless `other` has the same type and equal values.
    func isEqual(to other: any PlatformOptions) -> Bool
    func hash(into hasher: inout Hasher)
    /// A rule of the platform the job breaks but is sent despite, by the app's choice: logged once
    /// per job.
    var ruleWarning: String? { get }
    /// The channel a broadcast job goes to instead of devices (APNs' Live Activity broadcast):
    /// it is the job's one "device", sent once, and the job is written back without `tokens`.
    var channel: String? { get }
}

extension PlatformOptions {
    public var ruleWarning: String? { nil }
    public var channel: String? { nil }
}

extension PlatformOptions where Self: Hashable {
    public func isEqual(to other: any PlatformOptions) -> Bool {
        (other as? Self) == self
    }
}
