import Testing
@testable import WebPush

/// Which origins have a pool, driven as a value: bounded whatever the traffic, idle pools leave.
@Suite struct OriginPoolTableTests {
    static func origin(_ port: Int) throws -> WebPushEndpointOrigin {
        try WebPushEndpointOrigin(endpoint: "https://push\(port).example:\(port)/s")
    }

    @Test func aFullTableReplacesTheOldestIdlePoolAndRefusesWhenAllAreBusy() throws {
        let start = ContinuousClock.now
        var table = OriginPoolTable<Int>(maxOrigins: 2, idleTimeout: .seconds(60))
        guard case .open(let none) = table.acquire(try Self.origin(1), now: start), none.isEmpty else { Issue.record("open 1"); return }
        table.opened(try Self.origin(1), pool: 1, now: start)
        guard case .open = table.acquire(try Self.origin(2), now: start + .seconds(1)) else { Issue.record("open 2"); return }
        table.opened(try Self.origin(2), pool: 2, now: start + .seconds(1))
        // Both busy: a third origin is refused rather than a third pool made.
        guard case .full = table.acquire(try Self.origin(3), now: start + .seconds(2)) else { Issue.record("not full"); return }
        #expect(table.entries.count == 2)
        // The same origin reuses its pool.
        guard case .use(2) = table.acquire(try Self.origin(2), now: start + .seconds(3)) else { Issue.record("reuse"); return }
        table.finished(try Self.origin(1), now: start + .seconds(4))
        table.finished(try Self.origin(2), now: start + .seconds(5))
        // Origin 2 still has one in flight; origin 1 is idle and goes.
        guard case .open(let shut) = table.acquire(try Self.origin(3), now: start + .seconds(6)), shut == [1] else {
            Issue.record("expected pool 1 shut down"); return
        }
        table.opened(try Self.origin(3), pool: 3, now: start + .seconds(6))
        #expect(Set(table.entries.values.map(\.pool)) == [2, 3])
    }

    @Test func idlePoolsLeaveAfterTheTimeoutAndBusyOnesStay() throws {
        let start = ContinuousClock.now
        var table = OriginPoolTable<Int>(maxOrigins: 10, idleTimeout: .seconds(60))
        for port in 1...3 {
            _ = table.acquire(try Self.origin(port), now: start)
            table.opened(try Self.origin(port), pool: port, now: start)
        }
        table.finished(try Self.origin(1), now: start + .seconds(10))
        table.finished(try Self.origin(2), now: start + .seconds(30))
        #expect(table.sweep(now: start + .seconds(69)).isEmpty)
        #expect(table.sweep(now: start + .seconds(70)) == [1])
        #expect(table.sweep(now: start + .seconds(90)) == [2])
        #expect(table.sweep(now: start + .seconds(1000)).isEmpty, "pool 3 still has a request in flight")
        #expect(table.removeAll() == [3])
        #expect(table.entries.isEmpty)
    }

    /// However many origins subscriptions name, the table never holds more than its bound.
    @Test func fourHundredOriginsNeverMakeMoreThanTheBound() throws {
        let start = ContinuousClock.now
        var table = OriginPoolTable<Int>(maxOrigins: 64, idleTimeout: .seconds(300))
        var opened = 0, refused = 0, shutDown = 0
        for port in 1...400 {
            let now = start + .milliseconds(port)
            switch table.acquire(try Self.origin(port), now: now) {
            case .open(let gone):
                shutDown += gone.count
                table.opened(try Self.origin(port), pool: port, now: now)
                opened += 1
                if port % 2 == 0 { table.finished(try Self.origin(port), now: now) }
            case .full: refused += 1
            case .use: Issue.record("a new origin reused a pool")
            }
            #expect(table.entries.count <= 64)
        }
        #expect(opened + refused == 400 && opened - shutDown == table.entries.count)
    }
}
