@testable import AMQP
import Testing

@Suite struct AMQPBookkeepingTests {
    @Test func acksCoalesceIntoMultiple() {
        var unacked = UnackedDeliveries()
        for tag in UInt64(1)...6 { unacked.insert(tag) }
        let plan = unacked.planAcks([2, 1, 3, 5]).plan
        #expect(plan.map(\.tag) == [3, 5])
        #expect(plan.map(\.multiple) == [true, false])
        #expect(unacked.count == 2)
        #expect(unacked.contains(4) && unacked.contains(6))
        // Already settled or unknown tags are dropped, never sent.
        #expect(unacked.planAcks([1, 99]).plan.isEmpty)
        #expect(unacked.planAcks([1, 99]).dropped == 2)
        #expect(unacked.removeThrough(5) == 4)
        #expect(unacked.planAcks([6]).plan.map(\.tag) == [6])
        #expect(unacked.count == 0)
    }

    @Test func acksAfterAGapWaitForTheOldestWhenHolding() {
        var unacked = UnackedDeliveries()
        for tag in UInt64(1)...6 { unacked.insert(tag) }
        #expect(unacked.oldest == 1)
        // 1 is still being worked on: nothing goes, everything waits for it.
        var (plan, held, _) = unacked.planAcks([3, 2, 5], holdingGaps: true)
        #expect(plan.isEmpty && held == [2, 3, 5] && unacked.count == 6)
        // 1 is done: one multiple ack through 3; 5 waits for 4.
        (plan, held, _) = unacked.planAcks([1, 2, 3, 5], holdingGaps: true)
        #expect(plan.map(\.tag) == [3] && plan.map(\.multiple) == [true] && held == [5])
        #expect(unacked.oldest == 4)
        // The oldest alone goes as a single ack (the broker finds it first).
        (plan, held, _) = unacked.planAcks([4], holdingGaps: true)
        #expect(plan.map(\.tag) == [4] && plan.map(\.multiple) == [false] && held.isEmpty)
        (plan, held, _) = unacked.planAcks([5, 6], holdingGaps: true)
        #expect(plan.map(\.tag) == [6] && plan.map(\.multiple) == [true] && held.isEmpty && unacked.oldest == nil)
    }

    /// Against a plain set as the model: whatever the order of acks, the window agrees on which tags
    /// are outstanding and whose consumer each is, and every planned frame settles exactly the tags
    /// it should.
    @Test func windowAgreesWithASetUnderRandomOperations() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var unacked = UnackedDeliveries()
            var model = Set<UInt64>()
            var consumers: [UInt64: Int] = [:]
            var nextTag: UInt64 = 1
            for _ in 0..<400 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:
                    let consumer = Int.random(in: 0..<3, using: &generator)
                    unacked.insert(nextTag, consumer: consumer)
                    model.insert(nextTag)
                    consumers[nextTag] = consumer
                    nextTag += 1
                case 4..<6:
                    let tag = UInt64.random(in: 1...nextTag + 2, using: &generator)
                    unacked.remove(tag)
                    model.remove(tag)
                case 6:
                    let tag = UInt64.random(in: 1...nextTag, using: &generator)
                    let expected = model.filter { $0 <= tag }.max()
                    #expect(unacked.removeThrough(tag) == expected)
                    model = model.filter { $0 > tag }
                default:
                    let batch = (0..<Int.random(in: 1...6, using: &generator)).map { _ in UInt64.random(in: 1...nextTag + 1, using: &generator) }
                    let wanted = Set(batch).intersection(model)
                    let oldest = model.min()
                    let holding = Bool.random(using: &generator)
                    let (plan, held, dropped) = unacked.planAcks(batch, holdingGaps: holding)
                    #expect(dropped == Set(batch).count - wanted.count)
                    #expect(holding || held.isEmpty)
                    var settled = Set<UInt64>()
                    for (tag, multiple) in plan {
                        if multiple {
                            #expect(tag == plan.first?.tag && oldest != nil)
                            let covered = model.filter { $0 <= tag }
                            #expect(covered.isSubset(of: wanted), "a multiple ack must only cover acked tags")
                            settled.formUnion(covered)
                        } else {
                            settled.insert(tag)
                        }
                    }
                    #expect(settled.union(held) == wanted && settled.isDisjoint(with: held))
                    #expect(held.allSatisfy { unacked.contains($0) }, "held acks stay outstanding")
                    #expect(held == held.sorted())
                    model.subtract(settled)
                }
                #expect(unacked.count == model.count)
                for tag in 1...nextTag + 1 where unacked.contains(tag) != model.contains(tag) {
                    Issue.record("tag \(tag): window \(unacked.contains(tag)), model \(model.contains(tag))")
                }
                for tag in 1...nextTag + 1 where unacked.consumer(of: tag) != (model.contains(tag) ? consumers[tag] : nil) {
                    Issue.record("tag \(tag): consumer \(String(describing: unacked.consumer(of: tag))), model \(String(describing: consumers[tag]))")
                }
            }
        }
    }

    /// One delivery that is never settled while 100,000 later ones are: the window moves on
    /// without it (memory follows the unsettled deliveries, not the tags since the oldest), and it
    /// stays the oldest, so acks after it still wait for it and a `multiple` never covers it.
    @Test func aStuckDeliveryDoesNotGrowTheWindow() {
        var unacked = UnackedDeliveries()
        var largestSpan = 0
        for tag in UInt64(1)...100_000 {
            unacked.insert(tag, consumer: tag == 1 ? 2 : 0)
            if tag > 1, tag % 2 == 0 { _ = unacked.planAcks([tag - 1 == 1 ? tag : tag - 1, tag]) }
            largestSpan = max(largestSpan, unacked.windowSpan)
        }
        #expect(unacked.oldest == 1 && unacked.contains(1))
        #expect(largestSpan <= 2 * UnackedDeliveries.stragglerSweepSpan, "span \(largestSpan)")
        #expect(unacked.stragglers == [1] && unacked.consumer(of: 1) == 2, "a straggler keeps its consumer")
        unacked.insert(100_001)
        let (plan, held, _) = unacked.planAcks([100_001], holdingGaps: true)
        #expect(plan.isEmpty && held == [100_001])
        #expect(unacked.removeThrough(1) == 1)
        #expect(unacked.count == 1 && unacked.oldest == 100_001)
    }

    /// Against a plain set, over enough deliveries that stragglers form: a few tags stay unsettled
    /// for thousands of deliveries while the rest are settled soon, in any order.
    @Test func windowWithStragglersAgreesWithASet() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            var unacked = UnackedDeliveries()
            var model = Set<UInt64>()
            var recent: [UInt64] = []
            for tag in UInt64(1)...30_000 {
                unacked.insert(tag)
                model.insert(tag)
                // One in 2,500 is stuck until the end; the others settle within a few deliveries.
                if Int.random(in: 0..<2_500, using: &generator) != 0 { recent.append(tag) }
                while recent.count > 8 {
                    let victim = recent.remove(at: Int.random(in: 0..<recent.count, using: &generator))
                    if Bool.random(using: &generator) {
                        unacked.remove(victim)
                        model.remove(victim)
                    } else {
                        let (plan, held, _) = unacked.planAcks([victim])
                        #expect(held.isEmpty)
                        for (planned, multiple) in plan {
                            if multiple { model = model.filter { $0 > planned } } else { model.remove(planned) }
                        }
                    }
                }
                if tag % 997 == 0 {
                    #expect(unacked.count == model.count)
                    #expect(unacked.oldest == model.min())
                    for probe in model.prefix(50) { #expect(unacked.contains(probe)) }
                }
            }
            for tag in model.sorted() { #expect(unacked.contains(tag)) }
            #expect(unacked.count == model.count)
            #expect(unacked.windowSpan <= 2 * UnackedDeliveries.stragglerSweepSpan + 16)
        }
    }

    @Test func confirmsSettleInOrderWithMultiple() {
        var results: [Int: Bool] = [:]
        var confirms = PublishConfirms<Int>()
        for index in 1...5 { confirms.record(index, returnKey: nil) }
        for (index, result) in confirms.settle(deliveryTag: 3, multiple: true, nacked: false) { results[index] = (try? result.get()) != nil }
        for (index, result) in confirms.settle(deliveryTag: 5, multiple: false, nacked: true) { results[index] = (try? result.get()) != nil }
        #expect(results == [1: true, 2: true, 3: true, 5: false])
        #expect(confirms.outstanding == 1)
        let failed = confirms.reset(failingWith: AMQPError(code: .connectionLost, message: "x"))
        #expect(failed.count == 1)
        #expect(confirms.nextSequence == 1)
    }

    @Test("confirms over many publishes: single, multiple and out-of-order acks across the array's compaction")
    func confirmsAcrossCompaction() {
        var settled: [Int: Bool] = [:]
        var confirms = PublishConfirms<Int>()
        func publish(_ count: Int) {
            for _ in 0..<count { confirms.record(Int(confirms.nextSequence), returnKey: nil) }
        }
        func settle(_ tag: UInt64, multiple: Bool, nacked: Bool = false) {
            for (sequence, result) in confirms.settle(deliveryTag: tag, multiple: multiple, nacked: nacked) {
                settled[sequence] = (try? result.get()) != nil
            }
        }
        publish(200)
        settle(2, multiple: false)                 // a gap at 1
        settle(150, multiple: true)                // 1 and 3...150; the settled prefix is dropped
        #expect(settled.count == 150)
        publish(100)                               // 201...300
        settle(160, multiple: false, nacked: true)
        settle(155, multiple: false)
        settle(150, multiple: true)                // nothing left up to 150: no effect
        settle(999, multiple: false)               // unknown: ignored
        #expect(confirms.outstanding == 148)
        settle(300, multiple: true)
        #expect(settled.count == 300)
        #expect(settled.filter { !$0.value }.map(\.key) == [160])
        #expect(confirms.outstanding == 0)
        publish(1)
        #expect(confirms.nextSequence == 302)
        settle(301, multiple: false)
        #expect(settled[301] == true)
    }

    @Test func returnMatchesTheRightMandatoryPublish() {
        var outcome: [Int: String] = [:]
        var confirms = PublishConfirms<Int>()
        func key(_ routingKey: String, _ messageID: String) -> PublishConfirms<Int>.ReturnKey {
            .init(exchange: "x", routingKey: routingKey, bodyCount: 3, properties: AMQPProperties(messageID: messageID))
        }
        let keys = [key("routable", "a"), key("nowhere", "b"), key("nowhere", "c")]
        for (index, returnKey) in keys.enumerated() { confirms.record(index, returnKey: returnKey) }
        let matched = confirms.markReturned(key("nowhere", "c"), replyCode: 312, replyText: "NO_ROUTE")
        let unmatched = confirms.markReturned(key("other", "z"), replyCode: 312, replyText: "NO_ROUTE")
        #expect(matched && !unmatched)
        for (index, result) in confirms.settle(deliveryTag: 3, multiple: true, nacked: false) {
            switch result {
            case .success: outcome[index] = "ok"
            case .failure(let error): outcome[index] = "\(error.code)"
            }
        }
        #expect(outcome == [0: "ok", 1: "ok", 2: "unroutable"])
    }
}
