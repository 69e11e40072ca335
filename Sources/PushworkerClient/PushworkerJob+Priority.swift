extension PushworkerJob {
    /// The job's `priority`: APNs `apns-priority`, FCM `android.priority` (10 → HIGH, else
    /// NORMAL), Web Push `Urgency` (high, normal, low).
    public enum Priority: Int, Sendable, Hashable, CaseIterable {
        case high = 10
        case normal = 5
        case low = 1
    }
}
