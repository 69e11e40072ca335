import PushCore
import Testing
@testable import Worker

@Suite("--completion-events")
struct CompletionEventsTests {
    @Test func failuresKeepsEveryJobWhereSomethingWasNotSimplySent() {
        var sent = JobCounts()
        sent.devices = 3
        sent.sent = 3
        #expect(CompletionEvents.all.wants(sent, held: 0))
        #expect(!CompletionEvents.failures.wants(sent, held: 0))
        #expect(!CompletionEvents.none.wants(sent, held: 0))
        #expect(CompletionEvents.failures.wants(sent, held: 1), "held devices (APNs unreachable, credentials)")
        for change in [\JobCounts.failed, \.invalid, \.retried, \.chunks] {
            var counts = sent
            counts[keyPath: change] = 1
            #expect(CompletionEvents.failures.wants(counts, held: 0))
            #expect(!CompletionEvents.none.wants(counts, held: 0))
        }
        var missing = sent
        missing.groupsMissing = ["news"]
        #expect(CompletionEvents.failures.wants(missing, held: 0))
    }
}
