@testable import HTTP2
import Testing

/// The pool's pacing on its own clock: unpaced while the server answers in time, cut when it
/// answers late, raised again when it catches up; and, against a simulated server that answers a
/// fixed number a second, no request ever waits until its timeout.
@Suite struct StreamPacingTests {
    let origin = ContinuousClock.now

    @Test func fastAnswersDoubleTheStartUntilThePoolIsUnpaced() {
        var pacing = StreamPacing(requestTimeout: .seconds(30))
        #expect(pacing.allowed(capacity: 4000) == 256)
        var changes: [StreamPacing.Change] = []
        for step in 0..<10_000 {
            let inFlight = pacing.allowed(capacity: 4000)
            if let change = pacing.answered(after: .milliseconds(80), inFlight: inFlight, capacity: 4000, now: origin + .milliseconds(step)) {
                changes.append(change)
            }
        }
        // 256 + 512 + 1,024 + 2,048 answers: four round trips.
        #expect(changes == [.raised(to: 512), .raised(to: 1024), .raised(to: 2048), .unpaced])
        #expect(pacing.ceiling == nil)
        #expect(pacing.allowed(capacity: 4000) == 4000)
        #expect(pacing.answered(after: .milliseconds(80), inFlight: 4000, capacity: 4000, now: origin) == nil)
    }

    @Test func aServerSlowFromTheFirstAnswerNeverGetsMoreThanTheStart() {
        var pacing = StreamPacing(requestTimeout: .seconds(30))
        #expect(pacing.answered(after: .seconds(8), inFlight: 256, capacity: 4000, now: origin) == .cut(to: 128))
    }

    @Test func aSlowAnswerHalvesWhatIsInFlightOncePerSlowAnswerTime() {
        var pacing = StreamPacing(requestTimeout: .seconds(30), start: 4000)
        #expect(pacing.slowAnswer == .milliseconds(7500))
        #expect(pacing.answered(after: .seconds(8), inFlight: 3000, capacity: 4000, now: origin) == .cut(to: 1500))
        #expect(pacing.allowed(capacity: 4000) == 1500)
        // The answers to what was sent before the cut are slow too: no second cut for 7.5 s.
        #expect(pacing.answered(after: .seconds(9), inFlight: 1500, capacity: 4000, now: origin + .seconds(7)) == nil)
        #expect(pacing.timedOut(inFlight: 1500, now: origin + .seconds(7)) == nil)
        #expect(pacing.answered(after: .seconds(9), inFlight: 1500, capacity: 4000, now: origin + .milliseconds(7500)) == .cut(to: 750))
    }

    @Test func aTimeoutOnTheWireCutsAndTheFloorHolds() {
        var pacing = StreamPacing(requestTimeout: .seconds(2), floor: 16)
        #expect(pacing.timedOut(inFlight: 20, now: origin) == .cut(to: 16))
        #expect(pacing.timedOut(inFlight: 16, now: origin + .seconds(1)) == nil, "at the floor already")
        #expect(pacing.allowed(capacity: 100) == 16)
        #expect(pacing.allowed(capacity: 4) == 4, "never above what the connections allow")
    }

    @Test func timelyAnswersAtTheCeilingRaiseItUntilUnpaced() {
        var pacing = StreamPacing(requestTimeout: .seconds(30), start: 400)
        _ = pacing.answered(after: .seconds(10), inFlight: 400, capacity: 500, now: origin)
        #expect(pacing.ceiling == 200)
        // Answers below the ceiling's use, or not fast enough (over half of 7.5 s), raise nothing.
        for _ in 0..<1000 {
            #expect(pacing.answered(after: .seconds(1), inFlight: 150, capacity: 500, now: origin) == nil)
            #expect(pacing.answered(after: .seconds(4), inFlight: 200, capacity: 500, now: origin) == nil)
        }
        var changes: [StreamPacing.Change] = []
        for _ in 0..<2000 {
            if let change = pacing.answered(after: .seconds(1), inFlight: pacing.ceiling ?? 500, capacity: 500, now: origin) {
                changes.append(change)
            }
        }
        #expect(changes == [.raised(to: 250), .raised(to: 312), .raised(to: 390), .raised(to: 487), .unpaced])
        #expect(pacing.ceiling == nil)
    }

    /// A caller that reserves whole rounds (two of 100 against 256) never fills the ceiling. While
    /// it says it holds more back, timely answers raise the ceiling all the same; without that word
    /// they do not, and a slow answer cuts either way.
    @Test func heldBackDemandRaisesTheCeilingThoughItIsNotReached() {
        var pacing = StreamPacing(requestTimeout: .seconds(30))
        for _ in 0..<1000 {
            #expect(pacing.answered(after: .milliseconds(100), inFlight: 200, capacity: 4000, now: origin) == nil)
        }
        var changes: [StreamPacing.Change] = []
        for _ in 0..<4000 {
            if let change = pacing.answered(after: .milliseconds(100), inFlight: 200, capacity: 4000, demandHeldBack: true, now: origin) {
                changes.append(change)
            }
        }
        #expect(changes == [.raised(to: 512), .raised(to: 1024), .raised(to: 2048), .unpaced])

        var slow = StreamPacing(requestTimeout: .seconds(30))
        #expect(slow.answered(after: .seconds(8), inFlight: 200, capacity: 4000, demandHeldBack: true, now: origin) == .cut(to: 100))
        #expect(slow.answered(after: .milliseconds(100), inFlight: 100, capacity: 4000, demandHeldBack: true, now: origin) == nil,
                "after a cut the raise is by a quarter, once a ceiling's worth came in time")
    }

    /// Workers sharing one server that answers `perSecond` requests, first come first served,
    /// each keeping as many requests on the wire as it may and more always waiting. Unpaced, each
    /// request waits (all workers' streams) / perSecond: 3 × 4,000 / 500 = 24 s, near the 30 s
    /// timeout, past it with a fourth worker. Paced, no request reaches its timeout, and the
    /// server is never left without work.
    @Test(arguments: [1, 3, 6, 20])
    func aServerSlowerThanTheStreamsNeverMakesARequestTimeOut(workers: Int) {
        let perSecond = 500
        let step = Duration.seconds(1) / perSecond
        let timeout = Duration.seconds(30)
        var pacings = Array(repeating: StreamPacing(requestTimeout: timeout), count: workers)
        var onTheWire = Array(repeating: 0, count: workers)
        var server: [(worker: Int, sent: ContinuousClock.Instant)] = []
        var next = 0
        var timedOut = 0, idleSteps = 0, answers = 0
        var lateLatency = Duration.zero
        var now = origin
        let end = origin + .seconds(180)
        while now < end {
            for worker in 0..<workers {
                while onTheWire[worker] < pacings[worker].allowed(capacity: 4000) {
                    server.append((worker, now))
                    onTheWire[worker] += 1
                }
            }
            // Timeouts first: the client gives up at the deadline (none may come).
            while next < server.count, now - server[next].sent >= timeout {
                let worker = server[next].worker
                timedOut += 1
                _ = pacings[worker].timedOut(inFlight: onTheWire[worker], now: now)
                onTheWire[worker] -= 1
                next += 1
            }
            if next < server.count {
                let (worker, sent) = server[next]
                next += 1
                let latency = now - sent
                answers += 1
                if now > origin + .seconds(120) { lateLatency = max(lateLatency, latency) }
                _ = pacings[worker].answered(after: latency, inFlight: onTheWire[worker], capacity: 4000, now: now)
                onTheWire[worker] -= 1
            } else {
                idleSteps += 1
            }
            if next > 100_000 {
                server.removeFirst(next)
                next = 0
            }
            now += step
        }
        #expect(timedOut == 0)
        #expect(idleSteps == 0, "the server always had work")
        #expect(answers == 180 * perSecond)
        // Settled between half of the slow-answer time and the slow-answer time: the last minute.
        #expect(lateLatency < .milliseconds(7500), "latest latency in the last minute: \(lateLatency)")
    }
}
