import NIOConcurrencyHelpers

/// Notifications in flight to APNs: the unit of flow control. The budget is what APNs allows now
/// (the pools' live stream capacity: connections × SETTINGS_MAX_CONCURRENT_STREAMS), capped by
/// `--max-in-flight`. A round starts sending only while the budget has room, and gives its share
/// back when its last answer is in; so one-device jobs (a large prefetch) and 1,000-device chunk
/// jobs both keep the pipe full while the requests held stay bounded. Rounds wait in arrival order.
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

    /// `--max-in-flight`: the most the budget ever is, and the most one round takes.
    let limit: Int
    private let streamCapacity: @Sendable () -> Int
    private let state = NIOLockedValueBox(State())

    /// - Parameter streamCapacity: how many requests the APNs connections take now (an atomic
    ///   load: it is read for every round).
    init(limit: Int, streamCapacity: @escaping @Sendable () -> Int = { .max }) {
        self.limit = max(1, limit)
        self.streamCapacity = streamCapacity
    }

    /// The budget now.
    var capacity: Int { max(1, min(limit, streamCapacity())) }

    var current: Int { state.withLockedValue { $0.inFlight } }

    /// Runs `start` now if `count` more fit (a round larger than the whole budget starts alone,
    /// once nothing else is in flight), else once enough came back; `start` may then run on the
    /// thread that released them.
    func acquire(_ count: Int, then start: @escaping @Sendable () -> Void) {
        let share = min(max(count, 0), limit)
        let capacity = self.capacity
        let now = state.withLockedValue { state in
            if !state.hasWaiting, state.inFlight + share <= capacity || state.inFlight == 0 {
                state.inFlight += share
                return true
            }
            state.waiting.append(Waiting(count: share, start: start))
            return false
        }
        if now { start() }
    }

    func release(_ count: Int) {
        let share = min(max(count, 0), limit)
        let capacity = self.capacity
        // Usually one round becomes ready: it is returned alone, without an array per release.
        let (first, more): ((@Sendable () -> Void)?, [@Sendable () -> Void]) = state.withLockedValue { state in
            state.inFlight -= share
            var first: (@Sendable () -> Void)?
            var more: [@Sendable () -> Void] = []
            while state.hasWaiting,
                  state.inFlight + state.waiting[state.head].count <= capacity || state.inFlight == 0 {
                state.inFlight += state.waiting[state.head].count
                if first == nil { first = state.waiting[state.head].start } else { more.append(state.waiting[state.head].start) }
                state.head += 1
            }
            if state.head == state.waiting.count {
                state.waiting.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 64, state.head * 2 >= state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return (first, more)
        }
        first?()
        for start in more { start() }
    }
}
