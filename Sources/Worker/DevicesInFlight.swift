import NIOConcurrencyHelpers

/// Notifications in flight to the platforms: the unit of flow control. The budget is what they
/// allow now (the pools' live stream capacity: connections × SETTINGS_MAX_CONCURRENT_STREAMS), capped by
/// `--max-in-flight`. A round starts sending only while the budget has room, and gives its share
/// back as its answers come in (`RoundShare`); so one-device jobs (a large prefetch) and 1,000-device chunk
/// jobs both keep the pipe full while the requests held stay bounded.
///
/// Two lanes. Bulk rounds (fan-out chunks, jobs marked bulk) use at most `bulkShare` of the
/// budget, so the rest is always there for transactional ones (a password reset behind a
/// broadcast); and whenever room comes back, waiting transactional rounds start before waiting
/// bulk ones. Within a lane, rounds start in arrival order.
///
/// Rounds wait whole, so the pools may never see their paced capacity filled (rounds of 100
/// against 256 stop at 200): whenever rounds wait because the pools' capacity, not the limit, is
/// full, the transports are told (`demandHeldBack`), and a paced pool raises its ceiling on
/// timely answers as if it were reached.
final class DevicesInFlight: Sendable {
    private struct Waiting {
        var count: Int
        var start: @Sendable () -> Void
    }

    /// A FIFO: `head` is the next to start; compacted once half of it is spent.
    private struct Line {
        var items: [Waiting] = []
        var head = 0

        var isEmpty: Bool { head == items.count }
        var first: Waiting { items[head] }

        mutating func append(_ item: Waiting) { items.append(item) }

        mutating func removeFirst() -> Waiting {
            let item = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }

    private struct State {
        var inFlight = 0
        var bulkInFlight = 0
        var transactional = Line()
        var bulk = Line()
        /// What the transports were last told: rounds wait because their capacity is full.
        var demandHeldBack = false

        /// Rounds wait while the pools' capacity is below the limit: it, not `--max-in-flight`, holds them.
        func holdsBackDemand(capacity: Int, limit: Int) -> Bool {
            capacity < limit && !(transactional.isEmpty && bulk.isEmpty)
        }

        /// A round larger than the whole budget starts once nothing else is in flight.
        func fits(_ share: Int, capacity: Int) -> Bool {
            inFlight + share <= capacity || inFlight == 0
        }

        /// Bulk rounds stay within their cap (one alone always may: the budget shrank below it).
        func fitsBulk(_ share: Int, capacity: Int, bulkCap: Int) -> Bool {
            fits(share, capacity: capacity) && (bulkInFlight + share <= bulkCap || bulkInFlight == 0)
        }
    }

    /// `--max-in-flight`: the most the budget ever is, and the most one round takes.
    let limit: Int
    /// The part of the budget bulk rounds may use, in percent.
    let bulkSharePercent: Int
    /// The most one bulk round takes: a chunk larger than the bulk share counts as the share, so
    /// that it can never take the room kept for transactional rounds.
    let bulkLimit: Int
    private let streamCapacity: @Sendable () -> Int
    private let demandHeldBack: @Sendable (Bool) -> Void
    private let state = NIOLockedValueBox(State())

    /// - Parameters:
    ///   - streamCapacity: how many requests the apps' connections take now (read for every round).
    ///   - demandHeldBack: told when rounds start or stop waiting for that capacity; called under
    ///     the budget's lock, so that the transports see the changes in order: keep it short.
    init(limit: Int, bulkSharePercent: Int = 80, streamCapacity: @escaping @Sendable () -> Int = { .max },
         demandHeldBack: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.limit = max(1, limit)
        self.bulkSharePercent = min(100, max(1, bulkSharePercent))
        self.bulkLimit = max(1, self.limit * self.bulkSharePercent / 100)
        self.streamCapacity = streamCapacity
        self.demandHeldBack = demandHeldBack
    }

    /// Tells the transports when held-back demand appears or goes (rarely: not per round).
    private func updateDemand(_ state: inout State, capacity: Int) {
        let held = state.holdsBackDemand(capacity: capacity, limit: limit)
        guard held != state.demandHeldBack else { return }
        state.demandHeldBack = held
        demandHeldBack(held)
    }

    /// Whether the transports were last told that rounds wait for their capacity.
    var holdsBackDemand: Bool { state.withLockedValue { $0.demandHeldBack } }

    /// The budget now.
    var capacity: Int { max(1, min(limit, streamCapacity())) }

    private func bulkCap(_ capacity: Int) -> Int { max(1, capacity * bulkSharePercent / 100) }

    /// What a round of `count` devices counts against the budget: the same when it starts and ends.
    func share(of count: Int, bulk: Bool) -> Int { min(max(count, 0), bulk ? bulkLimit : limit) }

    var current: Int { state.withLockedValue { $0.inFlight } }
    var currentBulk: Int { state.withLockedValue { $0.bulkInFlight } }

    /// Runs `start` now if `count` more fit, else once enough came back; `start` may then run on
    /// the thread that released them.
    func acquire(_ count: Int, bulk: Bool = false, then start: @escaping @Sendable () -> Void) {
        let share = self.share(of: count, bulk: bulk)
        let capacity = self.capacity
        let bulkCap = self.bulkCap(capacity)
        let now = state.withLockedValue { state in
            if bulk {
                if state.transactional.isEmpty, state.bulk.isEmpty, state.fitsBulk(share, capacity: capacity, bulkCap: bulkCap) {
                    state.inFlight += share
                    state.bulkInFlight += share
                    return true
                }
                state.bulk.append(Waiting(count: share, start: start))
                updateDemand(&state, capacity: capacity)
                return false
            }
            if state.transactional.isEmpty, state.fits(share, capacity: capacity) {
                state.inFlight += share
                return true
            }
            state.transactional.append(Waiting(count: share, start: start))
            updateDemand(&state, capacity: capacity)
            return false
        }
        if now { start() }
    }

    /// Gives back what a round of `count` devices (of the lane it acquired in) took.
    func release(_ count: Int, bulk: Bool = false) {
        release(units: share(of: count, bulk: bulk), bulk: bulk)
    }

    /// Gives back part of a round's share (`RoundShare` says how much, as its answers come in).
    func release(units share: Int, bulk: Bool = false) {
        guard share > 0 else { return }
        let capacity = self.capacity
        let bulkCap = self.bulkCap(capacity)
        // Usually one round becomes ready: it is returned alone, without an array per release.
        let (first, more): ((@Sendable () -> Void)?, [@Sendable () -> Void]) = state.withLockedValue { state in
            state.inFlight -= share
            if bulk { state.bulkInFlight -= share }
            var first: (@Sendable () -> Void)?
            var more: [@Sendable () -> Void] = []
            func started(_ waiting: Waiting) {
                if first == nil { first = waiting.start } else { more.append(waiting.start) }
            }
            while !state.transactional.isEmpty, state.fits(state.transactional.first.count, capacity: capacity) {
                let waiting = state.transactional.removeFirst()
                state.inFlight += waiting.count
                started(waiting)
            }
            // Bulk rounds only once no transactional round waits: those overtake.
            while state.transactional.isEmpty, !state.bulk.isEmpty,
                  state.fitsBulk(state.bulk.first.count, capacity: capacity, bulkCap: bulkCap) {
                let waiting = state.bulk.removeFirst()
                state.inFlight += waiting.count
                state.bulkInFlight += waiting.count
                started(waiting)
            }
            // Nothing to tell while nothing waits and nothing was told (one round at a time).
            if state.demandHeldBack || !state.transactional.isEmpty || !state.bulk.isEmpty {
                updateDemand(&state, capacity: capacity)
            }
            return (first, more)
        }
        first?()
        for start in more { start() }
    }
}
