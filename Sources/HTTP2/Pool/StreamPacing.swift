/// How many requests a pool keeps on the wire, paced by how fast the server answers them.
///
/// A server that answers slower than it is asked queues the rest: by Little's law each request
/// then waits (requests in flight) / (answers per second). Past the request timeout the client
/// gives a request up and sends it again, though the server may already have done it, so every
/// timeout can be a duplicate (three workers of 4,000 streams each against one APNs sandbox that
/// answered ~500/s waited 24 s per request, and devices arrived up to six times). The pool
/// therefore holds back, unsent and safe to resend, what a slow server cannot answer in time:
///
/// - A new pool starts at `start` requests and doubles that each time a ceiling's worth of answers
///   came within half of `slowAnswer` (a quarter of the request timeout) while the ceiling was
///   reached: against a healthy APNs, answering in milliseconds, the ceiling is gone within a few
///   round trips, and a pool whose server falls behind from the first request never put more on
///   the wire than it could answer in time.
/// - "Reached" also counts when the caller holds requests back because this capacity is full
///   (`demandHeldBack`): a caller that reserves whole rounds (100 devices at a time against 256)
///   stops below the ceiling and would otherwise never see it raised. As in TCP's congestion
///   window validation (RFC 7661), the ceiling grows only while it is what limits the sender.
/// - An answer slower than `slowAnswer`, or a request that timed out on the wire, halves the
///   ceiling from what is in flight now, to no less than `floor`. The answers to requests sent
///   before a cut are still slow, so the next cut waits `slowAnswer`.
/// - After a cut, timely answers at the ceiling raise it by a quarter once a ceiling's worth of them
///   came in (about one round trip), until it reaches what the connections allow and the pool is
///   unpaced (`ceiling == nil`).
///
/// A value on the pool's I/O thread: it decides, the pool dispatches.
struct StreamPacing: Equatable, Sendable {
    let slowAnswer: Duration
    let floor: Int
    /// The most requests on the wire now; nil while unpaced.
    private(set) var ceiling: Int?
    private var noCutBefore: ContinuousClock.Instant?
    private var fastAnswers = 0
    /// Doubling, until the first cut.
    private var slowStart = true

    init(requestTimeout: Duration, floor: Int = 16, start: Int = 256) {
        slowAnswer = requestTimeout / 4
        self.floor = max(1, floor)
        ceiling = max(self.floor, start)
    }

    /// What a pool with `capacity` streams on its connections may have in flight now.
    func allowed(capacity: Int) -> Int { min(capacity, ceiling ?? .max) }

    enum Change: Equatable, Sendable {
        case cut(to: Int)
        case raised(to: Int)
        case unpaced
    }

    /// A response arrived `latency` after its request went out, with `inFlight` requests (this one
    /// included) on the wire and `capacity` streams on the connections. `demandHeldBack`: the
    /// caller holds more back because what the pool allows is full.
    mutating func answered(after latency: Duration, inFlight: Int, capacity: Int, demandHeldBack: Bool = false,
                           now: ContinuousClock.Instant) -> Change? {
        if latency >= slowAnswer { return slow(inFlight: inFlight, now: now) }
        guard let ceiling, latency * 2 < slowAnswer, inFlight >= ceiling || demandHeldBack else { return nil }
        fastAnswers += 1
        guard fastAnswers >= ceiling else { return nil }
        fastAnswers = 0
        let raised = slowStart ? 2 * ceiling : ceiling + max(1, ceiling / 4)
        if raised >= capacity {
            self.ceiling = nil
            return .unpaced
        }
        self.ceiling = raised
        return .raised(to: raised)
    }

    /// A request went unanswered on the wire until the request timeout.
    mutating func timedOut(inFlight: Int, now: ContinuousClock.Instant) -> Change? {
        slow(inFlight: inFlight, now: now)
    }

    private mutating func slow(inFlight: Int, now: ContinuousClock.Instant) -> Change? {
        fastAnswers = 0
        slowStart = false
        if let noCutBefore, now < noCutBefore { return nil }
        let cut = max(floor, min(ceiling ?? .max, inFlight) / 2)
        noCutBefore = now + slowAnswer
        guard cut != ceiling else { return nil }
        ceiling = cut
        return .cut(to: cut)
    }
}
