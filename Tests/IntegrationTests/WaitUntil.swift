import Testing

/// Waits on observed progress, never on time alone: polls `condition` until it holds. Past
/// `timeout` (a bound on a stuck test, not a measure of speed) it records `what` as the issue and
/// throws, ending the test.
func waitUntil(_ what: String, timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(50),
               _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: interval)
    }
}
