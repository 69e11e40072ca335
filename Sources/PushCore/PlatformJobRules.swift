/// One platform's part of reading a job. `JobParser` reads the fields every job has (id, app,
/// tokens, groups, expiration, payload, attempts, chunk) and hands the rest to these rules: the
/// platform's own fields and its checks of the payload (APNsCore's `APNsJobRules`).
public protocol PlatformJobRules: Sendable {
    /// The platform's name as the configuration file gives it (`apns`, `fcm`, `webpush`).
    var platformName: String { get }
    /// The job fields these rules read. Any other field that is not a shared one (or `x-`) is
    /// refused as unknown.
    var fieldNames: [String] { get }
    /// What a job without a payload is told it needs, e.g. "the APNs payload object, e.g. …".
    var payloadDescription: String { get }
    /// Reads the platform's fields and checks the payload (its bytes as they will be sent).
    func options(from fields: JobFields, payload: PayloadObject) throws(JobRejection) -> any PlatformOptions

    /// The payload built from the platform's own fields, for a job that gives those instead of
    /// `payload` (APNs' `live_activity`); nil when the job has none of them. `now`: UNIX seconds.
    func payload(from fields: JobFields, now: Int) throws(JobRejection) -> [UInt8]?

    /// One device as the platform names it: an element of the job's `tokens`, or a group member
    /// (always a string).
    func device(from value: JSONValue) throws(DeviceProblem) -> DeviceToken

    /// The channel a broadcast job names instead of devices (APNs' `channel`), checked; nil for a
    /// job of devices, and always for a platform without broadcasts.
    func channel(from fields: JobFields) throws(JobRejection) -> String?
}

extension PlatformJobRules {
    public func payload(from fields: JobFields, now: Int) throws(JobRejection) -> [UInt8]? { nil }
    public func channel(from fields: JobFields) throws(JobRejection) -> String? { nil }
}

/// Why a value is not a device of the platform: `member` is the part at fault within it (a Web
/// Push subscription's `keys.auth`), nil for the whole value.
public struct DeviceProblem: Error, Sendable, CustomStringConvertible {
    public let member: String?
    public let problem: String

    public init(member: String? = nil, _ problem: String) {
        self.member = member
        self.problem = problem
    }

    public var description: String { member.map { "\($0): \(problem)" } ?? problem }
}
