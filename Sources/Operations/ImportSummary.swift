/// What `groups import` did, for its closing line and its tests.
public struct ImportSummary: Sendable, Equatable {
    /// Lines read, blank ones included.
    public var lines = 0
    public var blank = 0
    /// Lines that held a valid device (sent to Redis; repeats included).
    public var devices = 0
    /// Devices that were not in the group yet (SADD's count); repeats in the file count once.
    public var added = 0
    public var bad = 0

    public init() {}
}

/// A line that is not a device: its number (from 1) and why.
public struct BadLine: Sendable, Equatable {
    public let number: Int
    public let problem: String
}

/// How far an import has come, for the progress bar.
public struct ImportProgress: Sendable, Equatable {
    public let summary: ImportSummary
    public let bytesRead: Int
    /// nil when reading a pipe (no percentage can be shown).
    public let totalBytes: Int?
}
