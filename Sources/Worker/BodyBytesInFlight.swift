import NIOConcurrencyHelpers

/// The memory that job bodies hold, against `--max-bytes-in-flight`. Prefetch counts messages, not
/// bytes, and the prefetch tuner raises it to thousands for small jobs, so a burst of large jobs
/// among small ones could bring prefetch × `--max-message-bytes` into memory. Instead the AMQP thread
/// asks `room` before it reads each body: a body that does not fit is never read whole, its delivery
/// goes back to the queue (`refuse`), and consumption pauses until the bytes held fall to half the
/// cap. So the bodies in memory never pass the cap, whatever the prefetch and however slow APNs
/// is; one body always fits when none is held, so a job larger than the cap still runs alone.
///
/// A body is held twice while its job runs (the delivery's bytes, and the payload the job keeps),
/// so each counts `copiesPerBody` times against the cap.
final class BodyBytesInFlight: Sendable {
    enum Action: Equatable { case none, pause, resume }
    static let copiesPerBody = 2

    private struct State {
        /// Counted bytes: body bytes × `copiesPerBody`.
        var held = 0
        var peak = 0
        var paused = false
    }
    private let cap: Int
    private let state = NIOLockedValueBox(State())

    init(cap: Int) { self.cap = cap }

    /// Counted bytes held now (body bytes × `copiesPerBody`).
    var held: Int { state.withLockedValue { $0.held } }
    /// The most counted bytes held at once so far.
    var peak: Int { state.withLockedValue { $0.peak } }

    /// The largest body that fits now.
    var room: Int {
        state.withLockedValue { state in
            state.held == 0 ? .max : max(0, cap - state.held) / Self.copiesPerBody
        }
    }

    /// A body of `bytes` was read: it is held until `give`.
    func take(_ bytes: Int) -> Action {
        state.withLockedValue { state in
            state.held += bytes * Self.copiesPerBody
            state.peak = max(state.peak, state.held)
            guard !state.paused, state.held > cap else { return .none }
            state.paused = true
            return .pause
        }
    }

    /// A body did not fit (`room`): its delivery goes back, and consumption pauses.
    func refuse() -> Action {
        state.withLockedValue { state in
            guard !state.paused else { return .none }
            state.paused = true
            return .pause
        }
    }

    func give(_ bytes: Int) -> Action {
        state.withLockedValue { state in
            state.held -= bytes * Self.copiesPerBody
            guard state.paused, state.held <= cap / 2 else { return .none }
            state.paused = false
            return .resume
        }
    }
}
