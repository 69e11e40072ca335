import NIOConcurrencyHelpers

/// Notifications in flight to APNs: the unit of flow control (`--max-in-flight`). A round starts
/// sending only while the budget has room, and gives its share back when its last answer is in;
/// so one-device jobs (a large prefetch) and 1,000-device chunk jobs both keep the pipe full while
/// the requests held stay bounded. Rounds wait in arrival order.
final class DevicesInFlight: Sendable {
    private struct Waiting {
        var count: Int
        var start: @Sendable () -> Void
    }

    private struct State {
        var inFlight = 0
        /// A FIFO: `head` is the next to start; compacted once half of it is spent.
        var waiting: [Waiting] = []
        var head = 0

        var hasWaiting: Bool { head < waiting.count }
    }

    let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var current: Int { state.withLockedValue { $0.inFlight } }

    /// Runs `start` now if `count` more fit (a round larger than the whole budget takes all of it),
    /// else once enough came back; `start` may then run on the thread that released them.
    func acquire(_ count: Int, then start: @escaping @Sendable () -> Void) {
        let share = min(max(count, 0), capacity)
        let now = state.withLockedValue { state in
            if !state.hasWaiting, state.inFlight + share <= capacity {
                state.inFlight += share
                return true
            }
            state.waiting.append(Waiting(count: share, start: start))
            return false
        }
        if now { start() }
    }

    func release(_ count: Int) {
        let share = min(max(count, 0), capacity)
        let ready: [@Sendable () -> Void] = state.withLockedValue { state in
            state.inFlight -= share
            var ready: [@Sendable () -> Void] = []
            while state.hasWaiting, state.inFlight + state.waiting[state.head].count <= capacity {
                state.inFlight += state.waiting[state.head].count
                ready.append(state.waiting[state.head].start)
                state.head += 1
            }
            if state.head == state.waiting.count {
                state.waiting.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 64, state.head * 2 >= state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return ready
        }
        for start in ready { start() }
    }
}
