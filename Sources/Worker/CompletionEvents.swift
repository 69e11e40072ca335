import PushCore

/// Which jobs publish `job.completed` (`--completion-events`). Every one doubles the broker's
/// messages for one-device jobs; applications that only act on failures can skip the rest.
/// `token.invalid`, `delivery.failed`, `job.rejected` and `group.missing` are always published.
public enum CompletionEvents: String, Sendable, CaseIterable {
    /// Every job, chunk and retry round (the default).
    case all
    /// Only those where something was not simply sent: a device failed, was invalid, was retried
    /// or held, a group was missing, or the job was split into chunks.
    case failures
    case none

    func wants(_ counts: JobCounts, held: Int) -> Bool {
        switch self {
        case .all: true
        case .none: false
        case .failures:
            counts.failed > 0 || counts.invalid > 0 || counts.retried > 0 || held > 0
                || !counts.groupsMissing.isEmpty || counts.chunks > 0
        }
    }
}
