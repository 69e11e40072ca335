import NIOConcurrencyHelpers

/// The bytes of job bodies held by unsettled deliveries. Prefetch counts messages, not bytes, so
/// this says when to stop taking more (above the cap) and when to take them again (below half of
/// it). Each body is at most `--max-message-bytes` (larger ones are never read whole), so what a
/// worker holds stays below cap + prefetch × max-message-bytes, and below the cap once the
/// deliveries the broker had already sent are in.
final class BodyBytesInFlight: Sendable {
    enum Action: Equatable { case none, pause, resume }

    private struct State {
        var held = 0
        var paused = false
    }
    private let cap: Int
    private let state = NIOLockedValueBox(State())

    init(cap: Int) { self.cap = cap }

    var held: Int { state.withLockedValue { $0.held } }

    func take(_ bytes: Int) -> Action {
        state.withLockedValue { state in
            state.held += bytes
            guard !state.paused, state.held > cap else { return .none }
            state.paused = true
            return .pause
        }
    }

    func give(_ bytes: Int) -> Action {
        state.withLockedValue { state in
            state.held -= bytes
            guard state.paused, state.held <= cap / 2 else { return .none }
            state.paused = false
            return .resume
        }
    }
}
