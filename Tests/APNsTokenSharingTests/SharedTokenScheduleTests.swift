import Testing
@testable import APNsTokenSharing

@Suite struct SharedTokenScheduleTests {
    typealias Token = SharedTokenSchedule.Token
    static let refresh = Duration.seconds(40 * 60)
    static let start: Int64 = 1_800_000_000_000

    static func token(at milliseconds: Int64, _ tag: String) -> Token {
        Token(issuedAt: Int(milliseconds / 1000), jwt: "header.claims.\(tag)")
    }

    @Test func theStoredValueIsTheIssueTimeAndTheJWT() {
        let token = Token(issuedAt: 1_800_000_000, jwt: "aGVhZGVy.Y2xhaW1z.c2ln")
        #expect(token.stored == "1800000000.aGVhZGVy.Y2xhaW1z.c2ln")
        #expect(Token(stored: token.stored) == token)
        #expect(Token(stored: "not a token") == nil)
        #expect(Token(stored: "1800000000.only.two") == nil)
        #expect(Token(stored: "x.a.b.c") == nil)
    }

    @Test func theFirstWorkerCreatesTheKeyAndUsesItsTokenForOnePeriod() {
        var schedule = SharedTokenSchedule(refresh: Self.refresh)
        let now = Self.start
        let actions1 = schedule.handle(.due, now: now)
        #expect(actions1 == [.read])
        let actions2 = schedule.handle(.found(nil), now: now)
        #expect(actions2 == [.create])
        let minted = Self.token(at: now, "a")
        let actions3 = schedule.handle(.created(minted), now: now)
        #expect(actions3 == [.use(minted)])
        #expect(schedule.current?.origin == .shared)
        #expect(schedule.nextDueMilliseconds == now + 40 * 60 * 1000)
        // Nothing to do before the period ends.
        let early = schedule.handle(.due, now: now + 39 * 60 * 1000)
        #expect(early.isEmpty)
    }

    /// A value APNs would refuse (garbage, another key's, forged, future-dated) is never adopted:
    /// before, a token with `iat` a day ahead had a negative age, every worker adopted it and no
    /// APNs app sent for the key's whole life. The worker writes its own over it and uses that.
    @Test func anUnusableStoredValueIsReplacedNotAdopted() {
        var schedule = SharedTokenSchedule(refresh: Self.refresh)
        let now = Self.start
        let actions = schedule.handle(.foundUnusable(reason: "it was issued 86400 s in the future"), now: now)
        #expect(actions == [.warnReplaced(reason: "it was issued 86400 s in the future"), .overwrite])
        #expect(schedule.current == nil)
        let ours = Self.token(at: now, "ours")
        #expect(schedule.handle(.created(ours), now: now) == [.use(ours)])
        #expect(schedule.current?.token == ours && schedule.current?.origin == .shared)
    }

    @Test func aWorkerThatLosesTheCreationUsesTheWinnersToken() {
        var schedule = SharedTokenSchedule(refresh: Self.refresh)
        let now = Self.start
        _ = schedule.handle(.due, now: now)
        _ = schedule.handle(.found(nil), now: now)
        let actions4 = schedule.handle(.lostCreation, now: now)
        #expect(actions4 == [.read])
        let winners = Self.token(at: now, "winner")
        let actions5 = schedule.handle(.found(winners), now: now + 5)
        #expect(actions5 == [.use(winners)])
    }

    @Test func theSameTokenStillInRedisAtTheEndOfThePeriodIsAskedForAgainShortly() {
        var schedule = SharedTokenSchedule(refresh: Self.refresh)
        let first = Self.token(at: Self.start, "first")
        _ = schedule.handle(.created(first), now: Self.start)
        let due = schedule.nextDueMilliseconds
        let actions6 = schedule.handle(.due, now: due)
        #expect(actions6 == [.read])
        let unchanged = schedule.handle(.found(first), now: due)
        #expect(unchanged.isEmpty)
        #expect(schedule.nextDueMilliseconds == due + schedule.retryMilliseconds)
        let later = due + schedule.retryMilliseconds
        let actions7 = schedule.handle(.found(nil), now: later)
        #expect(actions7 == [.create])
        let second = Self.token(at: later, "second")
        let actions8 = schedule.handle(.created(second), now: later)
        #expect(actions8 == [.use(second)])
    }

    @Test func withRedisDownTheWorkerWarnsOnceUsesItsOwnTokenAndRejoinsWhenRedisIsBack() {
        var schedule = SharedTokenSchedule(refresh: Self.refresh)
        var now = Self.start
        let actions9 = schedule.handle(.due, now: now)
        #expect(actions9 == [.read])
        let actions10 = schedule.handle(.redisFailed(reason: "connection refused"), now: now)
        #expect(actions10 == [.warnFallback(reason: "connection refused"), .useLocal])
        let local = Self.token(at: now, "local")
        let actions11 = schedule.handle(.mintedLocally(local), now: now)
        #expect(actions11 == [.use(local)])
        #expect(schedule.current?.origin == .local)

        // Still down a period later: a new local token, no second warning.
        now = schedule.nextDueMilliseconds
        _ = schedule.handle(.due, now: now)
        let actions12 = schedule.handle(.redisFailed(reason: "timeout"), now: now)
        #expect(actions12 == [.useLocal])
        let local2 = Self.token(at: now, "local2")
        _ = schedule.handle(.mintedLocally(local2), now: now)

        // Back: at the local token's end the fleet's token is taken, and that is said once.
        now = schedule.nextDueMilliseconds
        let actions13 = schedule.handle(.due, now: now)
        #expect(actions13 == [.read])
        let shared = Self.token(at: now - 60_000, "shared")
        let actions14 = schedule.handle(.found(shared), now: now)
        #expect(actions14 == [.use(shared), .noteRejoined])
        #expect(schedule.current?.origin == .shared)
        #expect(!schedule.fallingBack)
    }

    @Test func aFailureWhileTheTokenIsYoungKeepsIt() {
        var schedule = SharedTokenSchedule(refresh: Self.refresh)
        let token = Self.token(at: Self.start, "a")
        _ = schedule.handle(.created(token), now: Self.start)
        let actions = schedule.handle(.redisFailed(reason: "timeout"), now: Self.start + 1000)
        #expect(actions.isEmpty)
        #expect(schedule.current?.token == token)
        #expect(!schedule.fallingBack)
    }

    @Test func aStoredTokenThatNeverExpiresIsNotUsedForever() {
        var schedule = SharedTokenSchedule(refresh: Self.refresh)
        let token = Self.token(at: Self.start, "a")
        _ = schedule.handle(.created(token), now: Self.start)
        let now = Self.start + schedule.staleMilliseconds
        let actions = schedule.handle(.found(token), now: now)
        #expect(actions.count == 2)
        #expect(actions.last == .useLocal)
    }

    @Test func theTestRangeRefreshRetriesWithinAFractionOfThePeriod() {
        let schedule = SharedTokenSchedule(refresh: .seconds(10))
        #expect(schedule.refreshMilliseconds == 10_000)
        #expect(schedule.retryMilliseconds == 250)
        #expect(schedule.staleMilliseconds == 15_000)
    }

    /// Four workers (clocks a little apart, Redis answering in turn) over ten periods: one token
    /// per period for all of them, a worker's token never changes sooner than a period less the
    /// clocks' spread and the retry, and while Redis is down each uses its own and then rejoins.
    @Test func aFleetSharesOneTokenPerPeriod() {
        var fleet = Fleet(workers: 4, refresh: .seconds(10))
        let end = Self.start + 100_000
        var now = Self.start
        while now < end {
            fleet.advance(to: now)
            now += 50
        }
        #expect(fleet.created.count >= 10 && fleet.created.count <= 11)
        #expect(fleet.localTokens == 0)
        for worker in fleet.workers {
            // Every worker used every token the fleet created (bar the one created at the very end).
            #expect(Set(worker.used.map(\.token)).isSuperset(of: Set(fleet.created.dropLast())))
            for (previous, next) in zip(worker.used, worker.used.dropFirst()) {
                #expect(next.at - previous.at >= 10_000 - 1_500)
            }
        }

        fleet.redisDown = true
        let outageEnd = now + 30_000
        while now < outageEnd {
            fleet.advance(to: now)
            now += 50
        }
        #expect(fleet.localTokens >= 4)
        #expect(fleet.warnings == 4)
        fleet.redisDown = false
        let afterOutage = now + 30_000
        while now < afterOutage {
            fleet.advance(to: now)
            now += 50
        }
        #expect(fleet.rejoined == 4)
        #expect(fleet.workers.allSatisfy { $0.schedule.current?.origin == .shared })
    }

    /// Workers and a Redis with SET NX PX semantics, in simulated time.
    struct Fleet {
        struct Worker {
            var schedule: SharedTokenSchedule
            var clockOffset: Int64
            var used: [(token: Token, at: Int64)] = []
        }
        var workers: [Worker]
        var stored: (token: Token, expiresAt: Int64)?
        var created: [Token] = []
        var redisDown = false
        var localTokens = 0
        var warnings = 0
        var rejoined = 0
        private var minted = 0

        init(workers count: Int, refresh: Duration) {
            workers = (0..<count).map { Worker(schedule: SharedTokenSchedule(refresh: refresh), clockOffset: Int64($0) * 137) }
        }

        mutating func advance(to now: Int64) {
            if let stored, stored.expiresAt <= now { self.stored = nil }
            for index in workers.indices {
                let local = now + workers[index].clockOffset
                var pending: [SharedTokenSchedule.Event] = [.due]
                while !pending.isEmpty {
                    let event = pending.removeFirst()
                    for action in workers[index].schedule.handle(event, now: local) {
                        if let answer = perform(action, worker: index, now: now, local: local) { pending.append(answer) }
                    }
                }
            }
        }

        private mutating func perform(_ action: SharedTokenSchedule.Action, worker index: Int, now: Int64, local: Int64) -> SharedTokenSchedule.Event? {
            switch action {
            case .read:
                return redisDown ? .redisFailed(reason: "down") : .found(stored?.token)
            case .create:
                if redisDown { return .redisFailed(reason: "down") }
                guard stored == nil else { return .lostCreation }
                let token = mint(local)
                stored = (token, now + workers[index].schedule.refreshMilliseconds)
                created.append(token)
                return .created(token)
            case .overwrite:
                if redisDown { return .redisFailed(reason: "down") }
                let token = mint(local)
                stored = (token, now + workers[index].schedule.refreshMilliseconds)
                created.append(token)
                return .created(token)
            case .warnReplaced:
                warnings += 1
                return nil
            case .useLocal:
                localTokens += 1
                return .mintedLocally(mint(local))
            case let .use(token):
                workers[index].used.append((token, now))
                return nil
            case .warnFallback:
                warnings += 1
                return nil
            case .noteRejoined:
                rejoined += 1
                return nil
            }
        }

        private mutating func mint(_ local: Int64) -> Token {
            minted += 1
            return Token(issuedAt: Int(local / 1000), jwt: "h.c.\(minted)")
        }
    }
}
