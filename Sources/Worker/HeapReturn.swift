internal import CSystemShim
import NIOConcurrencyHelpers

/// Gives memory back to the system once the worker is idle. glibc keeps freed memory in its
/// arenas: after a large fan-out the worker otherwise stayed well above its idle size, and grew
/// further on the next fan-out when other threads' arenas filled up (measured:
/// docs/evidence/code-measurements.md#heap-return).
/// Only for glibc's malloc (debug and sanitizer builds): release builds allocate with jemalloc,
/// whose background thread returns freed pages (Sources/MallocTuning), so there the worker makes
/// no `HeapReturn` and tunes nothing (`glibcAllocates`), and a job's end takes no lock for it.
final class HeapReturn: Sendable {
    /// Read once: whether malloc is glibc's (not jemalloc's).
    static let glibcAllocates = pw_malloc_is_glibc() != 0

    private struct State {
        var jobsSinceTrim = 0
        var lastTrim = ContinuousClock.now
    }
    private let state = NIOLockedValueBox(State())
    /// Trimming walks every arena: not after each job, only when a burst of work is over.
    private let minimumJobs: Int
    private let minimumInterval: Duration

    init(minimumJobs: Int = 100, minimumInterval: Duration = .seconds(2)) {
        self.minimumJobs = minimumJobs
        self.minimumInterval = minimumInterval
    }

    /// Few arenas: each thread that ever allocated would otherwise keep its own pool of free
    /// memory. No fastbins: every task a job runs in is a "large" (> 1 KiB) allocation, and glibc
    /// consolidates all fastbins before each one; small blocks still come from the per-thread
    /// cache. Call before the worker's threads start.
    static func tuneAllocator(arenas: Int32 = 2) {
        guard glibcAllocates else { return }
        _ = pw_malloc_limit_arenas(arenas)
        _ = pw_malloc_disable_fastbins()
    }

    func jobFinished(stillInFlight: Int) {
        let trim = state.withLockedValue { state in
            state.jobsSinceTrim += 1
            guard stillInFlight == 0, state.jobsSinceTrim >= minimumJobs,
                  ContinuousClock.now - state.lastTrim >= minimumInterval else { return false }
            state.jobsSinceTrim = 0
            state.lastTrim = .now
            return true
        }
        if trim { _ = pw_malloc_trim() }
    }
}
