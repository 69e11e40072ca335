extension APNsPayload {
    /// `aps.interruption-level`: how strongly the notification may interrupt (iOS 15+).
    public enum InterruptionLevel: String, Sendable, Hashable, CaseIterable {
        case passive
        case active
        case timeSensitive = "time-sensitive"
        case critical
    }
}
